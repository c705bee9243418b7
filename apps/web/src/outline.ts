/**
 * The outline beside the text: every heading of the document, a click moves there, and the heading whose
 * chat is shown is marked. Also where the page finds headings in the editor's document (the chat follows
 * the heading above the cursor).
 */
import { HEADING_ID_ATTR } from '@collab/doc-schema/editor'
import type { Editor } from '@tiptap/core'
import type { Node } from '@tiptap/pm/model'
import { h } from './dom.ts'

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

/**
 * Whether a change from `before` to `after` may have changed the headings: the top-level blocks that are not
 * the same objects in both (ProseMirror keeps the unchanged ones) include a heading. Compares references
 * from both ends, so typing in a paragraph costs a pass over the block list and no walk of any block.
 */
export function headingsMayDiffer(before: Node, after: Node): boolean {
  if (before === after) return false
  const min = Math.min(before.childCount, after.childCount)
  let start = 0
  while (start < min && before.child(start) === after.child(start)) start++
  let endBefore = before.childCount
  let endAfter = after.childCount
  while (endBefore > start && endAfter > start && before.child(endBefore - 1) === after.child(endAfter - 1)) {
    endBefore--
    endAfter--
  }
  for (let i = start; i < endBefore; i++) if (before.child(i).type.name === 'heading') return true
  for (let i = start; i < endAfter; i++) if (after.child(i).type.name === 'heading') return true
  return false
}

export type OutlinePanel = {
  /** Called on every change of the document: redraws the list when the change touched a heading. */
  refresh(change?: { before: Node; after: Node }): void
  /** Marks the heading with this id (the one whose chat is shown); null marks none. */
  setCurrent(id: string | null): void
}

/** Runs `work` when the page is idle (at the latest after `timeout` ms), where the browser can say so. */
function whenIdle(work: () => void, timeout: number): void {
  if (typeof requestIdleCallback === 'function') requestIdleCallback(work, { timeout })
  else setTimeout(work, Math.min(timeout, 200))
}

/** How long a change to the headings may wait for an idle moment before the outline shows it. */
const OUTLINE_IDLE_MS = 300

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
  // Typing in a paragraph leaves the outline alone (headingsMayDiffer); a change that touched a heading
  // redraws it in an idle moment, and only the entries that differ: a large document has thousands. Its
  // links share one listener.
  let pending = false
  let shown: Heading[] = []

  function refresh(change?: { before: Node; after: Node }) {
    if (pending || (change && !headingsMayDiffer(change.before, change.after))) return
    pending = true
    whenIdle(() => {
      pending = false
      draw(headings(editor.state.doc))
    }, OUTLINE_IDLE_MS)
  }

  /** Brings the list to `found`, touching only the entries whose level, id or text changed. */
  function draw(found: Heading[]) {
    const items = list.children
    for (let index = 0; index < found.length; index++) {
      const heading = found[index]!
      const before = shown[index]
      const item = items[index]
      if (
        item &&
        before &&
        before.level === heading.level &&
        before.id === heading.id &&
        before.text === heading.text
      )
        continue
      const next = h(
        'li',
        { class: `level-${heading.level}` },
        h(
          'a',
          { href: heading.id ? `#${heading.id}` : '#', 'data-index': String(index) },
          heading.text || '(untitled)',
        ),
      )
      if (item) item.replaceWith(next)
      else list.append(next)
    }
    while (list.children.length > found.length) list.lastElementChild?.remove()
    shown = found
    markCurrent()
  }

  list.addEventListener('click', (event) => {
    const link = (event.target as Element).closest('a[data-index]')
    if (!link) return
    event.preventDefault()
    // Positions move as the text before a heading changes; the list is only redrawn when headings change.
    const heading = headings(editor.state.doc)[Number(link.getAttribute('data-index'))]
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
