/**
 * Editors cannot delete what they do not know: an update that deletes content of a node or mark type the
 * editor did not declare is refused (a bound editor deletes such content as soon as it opens a document),
 * and a heading id an editor strips is put back with the same value.
 */
import { describe, expect, test } from 'bun:test'
import * as Y from 'yjs'
import { schema } from '../extensions.ts'
import {
  ALL_EDITOR_TYPES,
  checkEditorUpdate,
  type EditorTypes,
  FRAGMENT_NAME,
  HEADING_ID_ATTR,
  parseEditorTypes,
  repairHeadingIds,
  restoreHeadingIds,
  STARTER_KIT_TYPES,
} from '../index.ts'
import { changeOf, cloneDocument, loadDocument } from './fixtures.ts'

const MIXED = [
  'Intro paragraph.',
  'Water is H<sub>2</sub>O.',
  'A <mark>highlighted</mark> word.',
  '## Tasks',
  '- [ ] one\n- [x] two',
  '## Data',
  '| a | b |\n| - | - |\n| 1 | 2 |',
  '![alt](https://example.com/a.png)',
  '## Notes',
  'Plain notes.',
].join('\n\n')

const starterKit = parseEditorTypes(null)
const everything = parseEditorTypes(ALL_EDITOR_TYPES)

/** A server copy of a document and an editor's copy synced with it. */
function pair(markdown = MIXED) {
  const { doc: server } = loadDocument('Plan', markdown)
  const { doc: editor, fragment } = cloneDocument(server)
  return { server, editor, fragment }
}

/** The top-level block of the editor's copy whose node name is `name` (the first one). */
function block(fragment: Y.XmlFragment, name: string): Y.XmlElement {
  const found = fragment.toArray().find((c) => c instanceof Y.XmlElement && c.nodeName === name)
  if (!found) throw new Error(`no ${name}`)
  return found as Y.XmlElement
}

/** The index of the top-level paragraph whose text contains `text`. */
function paragraphWith(fragment: Y.XmlFragment, text: string): number {
  return fragment.toArray().findIndex((c) => c instanceof Y.XmlElement && c.toString().includes(text))
}

function refusal(server: Y.Doc, update: Uint8Array, types: EditorTypes): string {
  const check = checkEditorUpdate(server, update, types)
  if (check.ok) throw new Error('expected the update to be refused')
  return check.reason
}

describe('parseEditorTypes', () => {
  test('absent or empty: StarterKit; * : the whole schema; a list: exactly those names', () => {
    for (const value of [null, undefined, '', ' ']) expect(parseEditorTypes(value)).toEqual(starterKit)
    expect(everything).toEqual({ all: true })
    expect(parseEditorTypes('paragraph,bold,*')).toEqual({ all: true })
    const listed = parseEditorTypes(' paragraph , table,textStyle,, ')
    expect(listed).toEqual({ all: false, names: new Set(['paragraph', 'table']) })
  })

  test('StarterKit names are types of the project schema (the server never holds others)', () => {
    for (const name of STARTER_KIT_TYPES) expect(name in schema.nodes || name in schema.marks).toBe(true)
  })
})

describe('an editor that lacks a type cannot delete content of it', () => {
  // What y-prosemirror does when it opens a document it cannot represent: it deletes the element, or the
  // whole text of a block whose text carries a mark it lacks.
  const cases: Array<[string, string, (fragment: Y.XmlFragment) => void]> = [
    ['table', 'a table', (f) => f.delete(f.toArray().indexOf(block(f, 'table')), 1)],
    ['taskList', 'a task list', (f) => f.delete(f.toArray().indexOf(block(f, 'taskList')), 1)],
    ['image', 'an image', (f) => f.delete(f.toArray().indexOf(block(f, 'image')), 1)],
    [
      'highlight',
      'the text of a paragraph with a highlight',
      (f) => (f.get(paragraphWith(f, 'highlighted')) as Y.XmlElement).delete(0, 1),
    ],
    ['subscript', 'a paragraph with subscript text', (f) => f.delete(paragraphWith(f, 'Water'), 1)],
    [
      'tableCell',
      'text inside a table cell',
      (f) => {
        const row = block(f, 'table').get(1) as Y.XmlElement
        const text = ((row.get(0) as Y.XmlElement).get(0) as Y.XmlElement).get(0) as Y.XmlText
        text.delete(0, 1)
      },
    ],
  ]
  for (const [type, what, change] of cases)
    test(`${what}: refused for a StarterKit editor, naming ${type}; allowed with types=*`, () => {
      const { server, editor, fragment } = pair()
      const update = changeOf(server, editor, () => change(fragment))
      const reason = refusal(server, update, starterKit)
      expect(reason).toContain(`would delete ${type}, which this editor lacks`)
      expect(reason).toContain('?types=')
      expect(checkEditorUpdate(server, update, starterKit)).toMatchObject({ undeclaredType: type })
      expect(checkEditorUpdate(server, update, everything).ok).toBe(true)
    })

  test('declared types stay free to delete: paragraphs, headings, text, bold', () => {
    const { server, editor, fragment } = pair('Intro **bold** text.\n\n## Section\n\nBody.')
    const update = changeOf(server, editor, () => {
      ;((fragment.get(1) as Y.XmlElement).get(0) as Y.XmlText).delete(0, 12)
      fragment.delete(2, 2)
    })
    expect(checkEditorUpdate(server, update, starterKit)).toMatchObject({ ok: true, inserts: false })
  })

  test('a declared list: an editor that lists table may delete a table, not an image', () => {
    const { server, editor, fragment } = pair()
    const types = parseEditorTypes('paragraph,heading,table,tableRow,tableCell,tableHeader')
    const table = changeOf(server, editor, () =>
      fragment.delete(fragment.toArray().indexOf(block(fragment, 'table')), 1),
    )
    expect(checkEditorUpdate(server, table, types).ok).toBe(true)
    const second = pair()
    const image = changeOf(second.server, second.editor, () =>
      second.fragment.delete(second.fragment.toArray().indexOf(block(second.fragment, 'image')), 1),
    )
    expect(refusal(second.server, image, types)).toContain('would delete image')
  })

  test('a node type outside the project schema (stored before editor input was checked) is nobody’s to delete', () => {
    const { server, editor, fragment } = pair('Intro.')
    const legacy = new Y.XmlElement('callout')
    server.getXmlFragment(FRAGMENT_NAME).insert(1, [legacy])
    Y.applyUpdate(editor, Y.encodeStateAsUpdate(server, Y.encodeStateVector(editor)))
    const update = changeOf(server, editor, () => fragment.delete(1, 1))
    expect(refusal(server, update, everything)).toContain('would delete callout')
  })

  test('the reason fits a WebSocket close frame with its hint, whatever the type is called', () => {
    const { server, editor, fragment } = pair('Intro.')
    server.getXmlFragment(FRAGMENT_NAME).insert(1, [new Y.XmlElement(`κόμβος-${'x'.repeat(200)}`)])
    Y.applyUpdate(editor, Y.encodeStateAsUpdate(server, Y.encodeStateVector(editor)))
    const reason = `update refused: ${refusal(
      server,
      changeOf(server, editor, () => fragment.delete(1, 1)),
      everything,
    )}`
    expect(new TextEncoder().encode(reason).length).toBeLessThanOrEqual(120)
    expect(reason).toEndWith('?types= (docs/server.md)')
  })

  test('the check looks at what the update deletes, not at the document', () => {
    const examined = (sections: number) => {
      const markdown = Array.from(
        { length: sections },
        (_, i) => `## S${i}\n\nText ${i}.\n\n| a |\n| - |\n| ${i} |`,
      )
      const { server, editor, fragment } = pair(markdown.join('\n\n'))
      const update = changeOf(server, editor, () => {
        ;((fragment.get(2) as Y.XmlElement).get(0) as Y.XmlText).delete(0, 4)
        fragment.delete(4, 1) // the next heading
      })
      const check = checkEditorUpdate(server, update, starterKit)
      if (!check.ok) throw new Error(check.reason)
      return check.examined
    }
    expect(examined(1_000)).toBe(examined(10))
  })
})

describe('a heading id an editor strips is put back', () => {
  test('the same id, read before the update is applied (Yjs collects the deleted value)', () => {
    const { server, editor, fragment } = pair('Intro.\n\n## Section\n\nBody.')
    const heading = () => server.getXmlFragment(FRAGMENT_NAME).get(2) as Y.XmlElement
    const id = heading().getAttribute(HEADING_ID_ATTR) as string
    // What y-prosemirror does when a StarterKit editor types in the heading.
    const update = changeOf(server, editor, () => {
      const own = fragment.get(2) as Y.XmlElement
      ;(own.get(0) as Y.XmlText).insert(7, ' two')
      own.removeAttribute(HEADING_ID_ATTR)
    })
    const check = checkEditorUpdate(server, update, starterKit)
    if (!check.ok) throw new Error(check.reason)
    expect(check.strippedIds).toEqual([{ heading: heading(), id }])
    Y.applyUpdate(server, update)
    expect(heading().getAttribute(HEADING_ID_ATTR)).toBeUndefined()
    expect(restoreHeadingIds(check.strippedIds)).toBe(1)
    expect(heading().getAttribute(HEADING_ID_ATTR)).toBe(id)
    expect(heading().toString()).toContain('Section two')
  })

  test('an id replaced by another is not restored; a copy pasted with the stripped id gets a fresh one', () => {
    const { server, editor, fragment } = pair('Intro.\n\n## A\n\n## B')
    const serverFragment = server.getXmlFragment(FRAGMENT_NAME)
    const a = (serverFragment.get(2) as Y.XmlElement).getAttribute(HEADING_ID_ATTR) as string
    const b = (serverFragment.get(3) as Y.XmlElement).getAttribute(HEADING_ID_ATTR) as string
    const update = changeOf(server, editor, () => {
      ;(fragment.get(2) as Y.XmlElement).removeAttribute(HEADING_ID_ATTR)
      ;(fragment.get(3) as Y.XmlElement).setAttribute(HEADING_ID_ATTR, 'relabelled')
      const copy = new Y.XmlElement('heading')
      copy.setAttribute('level', 2 as unknown as string)
      copy.setAttribute(HEADING_ID_ATTR, a)
      fragment.insert(4, [copy])
    })
    const check = checkEditorUpdate(server, update, everything)
    if (!check.ok) throw new Error(check.reason)
    Y.applyUpdate(server, update)
    expect(restoreHeadingIds(check.strippedIds)).toBe(1)
    repairHeadingIds(serverFragment, check.headingItems)
    expect((serverFragment.get(2) as Y.XmlElement).getAttribute(HEADING_ID_ATTR)).toBe(a)
    const relabelled = (serverFragment.get(3) as Y.XmlElement).getAttribute(HEADING_ID_ATTR)
    expect(relabelled).not.toBe(b) // the malformed label was repaired, not rolled back
    const copy = (serverFragment.get(4) as Y.XmlElement).getAttribute(HEADING_ID_ATTR)
    expect(copy).not.toBe(a)
  })

  test('a deleted heading is not restored', () => {
    const { server, editor, fragment } = pair('Intro.\n\n## Gone')
    const update = changeOf(server, editor, () => {
      ;(fragment.get(2) as Y.XmlElement).removeAttribute(HEADING_ID_ATTR)
      fragment.delete(2, 1)
    })
    const check = checkEditorUpdate(server, update, starterKit)
    if (!check.ok) throw new Error(check.reason)
    Y.applyUpdate(server, update)
    expect(restoreHeadingIds(check.strippedIds)).toBe(0)
  })
})
