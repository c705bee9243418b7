/**
 * The slow tier (`bun run test:slow`): a document of 5 MiB of Yjs state, built through the public Markdown
 * path, then loaded, outlined, read by section and as plain text. Its size is its point (the reads must work
 * at the scale of the largest documents, and their cost is printed); building and reading it is ~10 s of CPU, and a
 * smaller document would not test it.
 */
import { expect, test } from 'bun:test'
import * as Y from 'yjs'
import {
  appendMarkdown,
  FRAGMENT_NAME,
  listSections,
  readOutline,
  readPlainText,
  renderSection,
} from '../index.ts'
import { expectOk, loadDocument } from './fixtures.ts'

const TARGET_BYTES = 5 * 1024 * 1024

/** ~5 MiB of Yjs state: sections of mixed blocks, built through the public Markdown path in parts. */
function generate(): { doc: Y.Doc; bytes: number } {
  const { doc } = loadDocument('Large document')
  const fragment = doc.getXmlFragment(FRAGMENT_NAME)
  const section = (n: number) =>
    [
      `## Section ${n}`,
      `Paragraph ${n} with **bold**, *italic*, \`code\`, a [link](https://example.com/${n}) and 漢字 👩‍👩‍👧‍👦 שלום. `.repeat(
        3,
      ),
      `- item ${n}.1\n- item ${n}.2\n- [ ] not a task`,
      `### Sub ${n}`,
      '| a | b |\n| - | - |\n| 1 | 2 |',
      '```ts\nconst x = 1\n```',
    ].join('\n\n')
  // The state is encoded (its size measured) only once the updates add up to the target: encoding the
  // whole document after every batch cost more than building it (56 encodes up to 5 MiB). Their sum is
  // at least the state's size (which merges them), so no batch is added past the first that reaches it.
  let appended = Y.encodeStateAsUpdate(doc).byteLength
  doc.on('update', (update: Uint8Array) => {
    appended += update.byteLength
  })
  let n = 0
  let bytes = 0
  while (bytes < TARGET_BYTES) {
    const parts: string[] = []
    for (let i = 0; i < 40; i++) parts.push(section(n++))
    // Through the public parser and append path, so they are exercised at scale too.
    expectOk(appendMarkdown(fragment, parts.join('\n\n')))
    if (appended >= TARGET_BYTES) bytes = Y.encodeStateAsUpdate(doc).byteLength
  }
  return { doc, bytes }
}

test('a 5 MiB document: outline and section reads work; their cost is printed', () => {
  const built = generate()
  const update = Y.encodeStateAsUpdate(built.doc)
  const doc = new Y.Doc()
  let started = performance.now()
  Y.applyUpdate(doc, update)
  const loadMs = performance.now() - started
  const fragment = doc.getXmlFragment(FRAGMENT_NAME)

  started = performance.now()
  const outline = readOutline(fragment)
  const outlineMs = performance.now() - started
  const sections = listSections(fragment)
  const middle = sections[Math.floor(sections.length / 2)]!
  started = performance.now()
  const read = expectOk(renderSection(fragment, middle.sectionId))
  const sectionMs = performance.now() - started
  started = performance.now()
  const text = readPlainText(fragment)
  const plainMs = performance.now() - started

  expect(update.byteLength).toBeGreaterThanOrEqual(TARGET_BYTES)
  expect(outline).toHaveLength(1)
  expect(outline[0]!.children.length).toBe(sections.filter((s) => s.level === 2).length)
  expect(read.text).toStartWith(`${'#'.repeat(middle.level)} ${middle.title}\n\n[1] `)
  expect(read.rev).toBe(middle.rev)
  expect(text).toContain(`\n${middle.title}\n`)
  expect(text).toContain(sections.at(-1)!.title)
  console.log(
    `5 MiB document: ${(update.byteLength / 1048576).toFixed(2)} MiB, ${fragment.length} top-level blocks, ` +
      `${sections.length} sections; applyUpdate ${loadMs.toFixed(0)} ms, outline ${outlineMs.toFixed(0)} ms, ` +
      `section read ${sectionMs.toFixed(1)} ms, plain text ${plainMs.toFixed(0)} ms`,
  )
}, 60_000)
