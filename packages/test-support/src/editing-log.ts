/**
 * What a TipTap page did while a test typed into it, for a failure to show. Two browser tests lost a
 * person's text now and then in CI, in the stored document and the editor alike (agent-edit-typing:
 * the first keystrokes after an agent's edit, 2026-12-03..05; web-controls: a word whose link was just
 * removed, 2026-12-05), and neither came back in dozens of runs here. The log tells a late transaction
 * made from a Yjs change (`y-sync$` among its meta keys: the binding redrawing from a stale mapping)
 * apart from keystrokes typed into a DOM node a redraw had replaced ("(detached)").
 *
 * The editor is found through its element (TipTap puts itself on `.ProseMirror` as `editor`), so the
 * same recorder serves the bundled StarterKit page and the web app.
 */
import type { Page } from 'puppeteer-core'

/**
 * Starts recording in `page`: each key and input event the editor's element gets (with where the DOM's
 * selection is), and each transaction the editor applies (whether it changed the document, its meta keys),
 * with the start of the editor's text and the caret after it. Read it with `editingLog`.
 */
export function recordEditing(page: Page): Promise<void> {
  return page.evaluate(() => {
    type EditorOnPage = {
      on(event: 'transaction', f: (e: { transaction: { docChanged: boolean; meta?: object } }) => void): void
      state: { selection: { from: number } }
      view: { dom: HTMLElement }
    }
    const element = document.querySelector('.ProseMirror') as (HTMLElement & { editor?: EditorOnPage }) | null
    const editor = element?.editor
    if (!editor) throw new Error('recordEditing: no TipTap editor on .ProseMirror')
    const log: string[] = []
    ;(window as unknown as { editingLog: string[] }).editingLog = log
    const start = performance.now()
    const at = () => Math.round(performance.now() - start)
    const text = () => editor.view.dom.textContent?.slice(0, 80)
    // Where the DOM's selection is (its text node's start, the offset, whether that node is still in the
    // page): a keystroke into a node the last redraw replaced would be one ProseMirror cannot read.
    const domCaret = () => {
      const selection = document.getSelection()
      const node = selection?.anchorNode
      return node
        ? `${JSON.stringify(node.textContent?.slice(0, 24))}@${selection.anchorOffset}${node.isConnected ? '' : ' (detached)'}`
        : 'none'
    }
    for (const type of ['keydown', 'beforeinput', 'input', 'focusout'])
      editor.view.dom.addEventListener(type, (event) =>
        log.push(
          `${at()} ${type} ${(event as KeyboardEvent).key ?? (event as InputEvent).data} at ${domCaret()}: ${text()}`,
        ),
      )
    editor.on('transaction', ({ transaction }) =>
      log.push(
        `${at()} ${transaction.docChanged ? 'doc' : 'selection'} [${Object.keys(transaction.meta ?? {})}] caret ${editor.state.selection.from}: ${text()}`,
      ),
    )
  })
}

/** The log `recordEditing` kept in `page` so far (empty when it was not started). */
export async function editingLog(page: Page): Promise<string[]> {
  return (await page.evaluate('window.editingLog ?? []')) as string[]
}
