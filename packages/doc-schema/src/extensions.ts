import type { Extensions } from '@tiptap/core'
import { getSchema } from '@tiptap/core'
import Blockquote from '@tiptap/extension-blockquote'
import Bold from '@tiptap/extension-bold'
import Code from '@tiptap/extension-code'
import CodeBlock from '@tiptap/extension-code-block'
import Document from '@tiptap/extension-document'
import HardBreak from '@tiptap/extension-hard-break'
import Heading from '@tiptap/extension-heading'
import Highlight from '@tiptap/extension-highlight'
import HorizontalRule from '@tiptap/extension-horizontal-rule'
import Image from '@tiptap/extension-image'
import Italic from '@tiptap/extension-italic'
import Link from '@tiptap/extension-link'
import { BulletList, ListItem, OrderedList, TaskItem, TaskList } from '@tiptap/extension-list'
import Paragraph from '@tiptap/extension-paragraph'
import Strike from '@tiptap/extension-strike'
import Subscript from '@tiptap/extension-subscript'
import Superscript from '@tiptap/extension-superscript'
import { Table, TableCell, TableHeader, TableRow } from '@tiptap/extension-table'
import Text from '@tiptap/extension-text'
import Underline from '@tiptap/extension-underline'
import { UniqueID } from '@tiptap/extension-unique-id'
import Youtube from '@tiptap/extension-youtube'
import type { Schema } from '@tiptap/pm/model'
import { isHexColor } from './color.ts'
import { newHeadingId } from './heading-id.ts'
import { HEADING_ID_ATTR } from './limits.ts'
import { MediaEmbed } from './media-node.ts'
import { SuggestionDelete, SuggestionInsert } from './suggestion-extensions.ts'

/**
 * The one extension list for the server and every editor: deploy them together, because a bound editor
 * deletes Yjs content its schema cannot represent and that deletion syncs back.
 */
export const extensions: Extensions = [
  // Flat document: the title heading, then any blocks (level 1 for the title is enforced by the writers).
  Document.extend({ content: 'heading block*' }),
  Paragraph,
  Text,
  Heading.configure({ levels: [1, 2, 3, 4, 5, 6] }),
  Blockquote,
  CodeBlock,
  HorizontalRule,
  HardBreak,
  BulletList,
  OrderedList,
  ListItem,
  TaskList,
  TaskItem.configure({ nested: true }),
  Table,
  TableRow,
  TableHeader,
  TableCell,
  // An image keeps the link around it (README badges: `[![alt](img)](url)`) and whether it shared a
  // paragraph with the block before it, so Markdown export can write a row of badges back as one line.
  Image.extend({
    addAttributes() {
      return {
        ...this.parent?.(),
        href: {
          default: null,
          parseHTML: (element) => element.getAttribute('data-href'),
          renderHTML: (attributes) => (attributes.href ? { 'data-href': attributes.href } : {}),
        },
        // null rather than false by default: Yjs holds non-null attributes only, so images written before
        // this attribute existed and images written now look the same (no section rev changes).
        sameLine: {
          default: null,
          parseHTML: (element) => (element.hasAttribute('data-same-line') ? true : null),
          renderHTML: (attributes) => (attributes.sameLine ? { 'data-same-line': '' } : {}),
        },
      }
    },
  }),
  Youtube,
  MediaEmbed,
  Bold,
  Italic,
  Strike,
  Underline,
  // TipTap's default `excludes: '_'` makes `**bold `code`**` invalid; code only excludes itself.
  Code.extend({ excludes: 'code' }),
  Link.configure({ openOnClick: false, autolink: false }),
  // A highlight's colour is written into a style attribute: `#rrggbb` only, else drawn without a colour
  // (content stored before the server checked colours must not make a reader's page fetch anything).
  Highlight.extend({
    addAttributes() {
      return {
        color: {
          default: null,
          parseHTML: (element) => {
            const color = element.getAttribute('data-color')
            return isHexColor(color) ? color : null
          },
          renderHTML: (attributes) =>
            isHexColor(attributes.color)
              ? {
                  'data-color': attributes.color,
                  style: `background-color: ${attributes.color}; color: inherit`,
                }
              : {},
        },
      }
    },
  }).configure({ multicolor: true }),
  Subscript,
  Superscript,
  // An agent's proposed insertions and deletions (suggestion-marks.ts); only the server starts one.
  SuggestionInsert,
  SuggestionDelete,
  UniqueID.configure({ types: ['heading'], attributeName: HEADING_ID_ATTR, generateID: newHeadingId }),
]

/** ProseMirror schema of the document; builds without a DOM. */
export const schema: Schema = getSchema(extensions)
