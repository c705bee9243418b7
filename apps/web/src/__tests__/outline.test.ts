/**
 * When the outline looks at a change (issue 28): typing in a paragraph of a large document must not make
 * the page walk it, and every change that adds, removes or edits a heading must reach the outline.
 */
import { describe, expect, test } from 'bun:test'
import { extensions } from '@collab/doc-schema/editor'
import { getSchema } from '@tiptap/core'
import type { Node } from '@tiptap/pm/model'
import { Transform } from '@tiptap/pm/transform'
import { headings, headingsMayDiffer } from '../outline.ts'

const schema = getSchema(extensions)
const heading = (level: number, text: string) => schema.nodes.heading!.create({ level }, schema.text(text))
const paragraph = (text: string) => schema.nodes.paragraph!.create(null, schema.text(text))
const start = (doc: Node, index: number) => {
  let pos = 0
  for (let i = 0; i < index; i++) pos += doc.child(i).nodeSize
  return pos
}

const doc = schema.nodes.doc!.create(null, [
  heading(1, 'Title'),
  paragraph('First paragraph.'),
  heading(2, 'Goals'),
  paragraph('Second paragraph.'),
  paragraph('Third paragraph.'),
])

describe('headingsMayDiffer', () => {
  test('typing in a paragraph, adding one or removing one leaves the headings alone', () => {
    const typed = new Transform(doc).insert(start(doc, 3) + 3, schema.text('x')).doc
    expect(headingsMayDiffer(doc, typed)).toBe(false)
    const added = new Transform(doc).insert(start(doc, 4), paragraph('New')).doc
    expect(headingsMayDiffer(doc, added)).toBe(false)
    const removed = new Transform(doc).delete(start(doc, 4), start(doc, 5)).doc
    expect(headingsMayDiffer(doc, removed)).toBe(false)
    expect(headingsMayDiffer(doc, doc)).toBe(false)
  })

  test('editing, adding, removing a heading or turning a paragraph into one is seen', () => {
    const edited = new Transform(doc).insert(start(doc, 2) + 3, schema.text('!')).doc
    expect(headingsMayDiffer(doc, edited)).toBe(true)
    const added = new Transform(doc).insert(start(doc, 4), heading(3, 'Risks')).doc
    expect(headingsMayDiffer(doc, added)).toBe(true)
    const removed = new Transform(doc).delete(start(doc, 2), start(doc, 3)).doc
    expect(headingsMayDiffer(doc, removed)).toBe(true)
    const p = start(doc, 4)
    const turned = new Transform(doc).setBlockType(p + 1, p + 1, schema.nodes.heading!, { level: 2 }).doc
    expect(headingsMayDiffer(doc, turned)).toBe(true)
    expect(headings(turned).map((h) => h.text)).toEqual(['Title', 'Goals', 'Third paragraph.'])
    // A change that rebuilds the whole content (as a remote change does) is seen as touching the headings.
    const rebuilt = schema.nodes.doc!.create(null, [heading(1, 'Title'), paragraph('Only')])
    expect(headingsMayDiffer(doc, rebuilt)).toBe(true)
  })
})
