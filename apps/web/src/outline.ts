/**
 * The outline beside the text: every heading of the document, a click moves there, and the heading whose
 * chat is shown is marked. Also where the page finds headings in the editor's document (the chat follows
 * the heading above the cursor).
 */
import { HEADING_ID_ATTR } from '@collab/doc-schema/editor'
import type { Editor } from '@tiptap/core'
import type { Node } from '@tiptap/pm/model'
import { clear, h } from './dom.ts'

/** A top-level heading of the document: its id, level, text and position. */
export type Heading = { id: string | null; level: number; text: string; pos: number }

function headingOf(node: Node, pos: number): Heading {
  return {
    id: (node.attrs[HEADING_ID_ATTR] as string | null) ?? null,
    level: node.attrs.level as number,
    text: node.textContent,
    pos,
  }
}

/** Every top-level heading of `doc`, in order. */
export function headings(doc: Node): Heading[] {
  const out: Heading[] = []
  doc.forEach((node, offset) => {
    if (node.type.name === 'heading') out.push(headingOf(node, offset))
  })
  return out
}

/** The heading above position `from`: a walk back from its block, not over the whole document. */
export function headingAbove(doc: Node, from: number): Heading | undefined {
  let index = doc.resolve(from).index(0)
  let pos = 0
  for (let i = 0; i < index; i++) pos += doc.child(i).nodeSize
  for (; index >= 0; index--) {
    const node = doc.child(index)
    if (node.type.name === 'heading') return headingOf(node, pos)
    if (index > 0) pos -= doc.child(index - 1).nodeSize
  }
  return undefined
}

export type OutlinePanel = {
  /** Called on every change of the document: rebuilds the list when the headings changed. */
  refresh(): void
  /** Marks the heading with this id (the one whose chat is shown); null marks none. */
  setCurrent(id: string | null): void
}

/**
 * Fills `list` with the headings of `editor`'s document. `onCurrentText` is told the marked heading's
 * text whenever the list is drawn, so the chat's title stays equal to it while it is edited.
 */
export function outlinePanel(
  list: HTMLElement,
  editor: Editor,
  onCurrentText: (text: string) => void,
): OutlinePanel {
  let current: string | null = null
  // The outline is rebuilt only when the headings changed (typing in a paragraph leaves it alone), at
  // most every 200 ms, and its links share one listener: on a large document the list has thousands.
  let timer: ReturnType<typeof setTimeout> | undefined
  let shown: Heading[] = []
  let shownKey = ''

  function refresh() {
    if (timer) return
    timer = setTimeout(() => {
      timer = undefined
      const found = headings(editor.state.doc)
      const key = found.map((heading) => `${heading.level} ${heading.id} ${heading.text}`).join('\n')
      shown = found
      if (key === shownKey) return markCurrent()
      shownKey = key
      clear(
        list,
        ...found.map((heading, index) =>
          h(
            'li',
            { class: `level-${heading.level}` },
            h(
              'a',
              { href: heading.id ? `#${heading.id}` : '#', 'data-index': String(index) },
              heading.text || '(untitled)',
            ),
          ),
        ),
      )
      markCurrent()
    }, 200)
  }

  list.addEventListener('click', (event) => {
    const link = (event.target as Element).closest('a[data-index]')
    if (!link) return
    event.preventDefault()
    const heading = shown[Number(link.getAttribute('data-index'))]
    if (heading) goTo(heading)
  })

  function markCurrent() {
    list.querySelector('li.current')?.classList.remove('current')
    const index = shown.findIndex((heading) => heading.id === current)
    if (index < 0) return
    list.children[index]?.classList.add('current')
    onCurrentText(shown[index]!.text || '(untitled)')
  }

  function goTo(heading: Heading) {
    editor
      .chain()
      .focus()
      .setTextSelection(heading.pos + 1)
      .run()
    const dom = editor.view.nodeDOM(heading.pos)
    if (dom instanceof HTMLElement) dom.scrollIntoView({ block: 'start', behavior: 'smooth' })
  }

  return {
    refresh,
    setCurrent(id) {
      current = id
      markCurrent()
    },
  }
}
