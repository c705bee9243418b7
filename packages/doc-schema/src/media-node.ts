import { mergeAttributes, Node } from '@tiptap/core'

/**
 * A video or audio file embedded by URL. YouTube links use the official Youtube node instead;
 * this node covers direct media files, which a browser plays with <video>/<audio>.
 */
export const MediaEmbed = Node.create({
  name: 'mediaEmbed',
  group: 'block',
  atom: true,
  draggable: true,

  addAttributes() {
    return {
      src: { default: null },
      kind: { default: 'video' },
    }
  },

  parseHTML() {
    return [
      { tag: 'video[src]', getAttrs: (el) => ({ src: el.getAttribute('src'), kind: 'video' }) },
      { tag: 'audio[src]', getAttrs: (el) => ({ src: el.getAttribute('src'), kind: 'audio' }) },
    ]
  },

  renderHTML({ node, HTMLAttributes }) {
    const tag = node.attrs.kind === 'audio' ? 'audio' : 'video'
    return [tag, mergeAttributes({ controls: 'true', 'data-media-embed': '' }, HTMLAttributes)]
  },
})
