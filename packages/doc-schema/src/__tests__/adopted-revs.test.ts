/**
 * Revs adopted from a stored outline (`adoptRevs`) hold for a section as long as its content is what the
 * outline described. A change drops the rev of the sections it changed only, so the first store after a
 * large document is opened and typed into does not hash every section again (issue 30). The property:
 * whatever edits follow (typing, blocks and headings inserted and deleted, a heading's id changed, several
 * in one transaction), a rev still adopted is that of content equal to the stored one.
 */
import { describe, expect, test } from 'bun:test'
import * as Y from 'yjs'
import { newHeadingId } from '../heading-id.ts'
import { adoptRevs, locateSections } from '../index.ts'
import { HEADING_ID_ATTR } from '../limits.ts'
import { sectionRev } from '../sections/section-rev.ts'
import { adoptedRev } from '../sections/section-total.ts'
import { cloneDocument, loadDocument } from './fixtures.ts'
import { paragraph, type Rng, seededRandom } from './yjs-builders.ts'

const SECTIONS = 8

function markdown(rng: Rng): string {
  const parts: string[] = []
  for (let s = 0; s < SECTIONS; s++) {
    parts.push(`## Section ${s}`)
    const blocks = Math.floor(rng() * 4)
    for (let b = 0; b < blocks; b++) parts.push(`Block ${b} of section ${s}, with *emphasis*.`)
  }
  return parts.join('\n\n')
}

/** A copy of `doc` that adopted a stand-in rev per section (`stored:<id>`) with its block count; the real revs. */
function adopting(doc: Y.Doc) {
  const copy = cloneDocument(doc)
  const truth = new Map<string, string>()
  const revs = new Map<string, { rev: string; size: number; blocks: number }>()
  for (const section of locateSections(copy.fragment)) {
    if (!section.sectionId || truth.has(section.sectionId)) continue
    truth.set(section.sectionId, sectionRev(section.heading, section.blocks))
    revs.set(section.sectionId, {
      rev: `stored:${section.sectionId}`,
      size: 1,
      blocks: section.blocks.length,
    })
  }
  adoptRevs(copy.fragment, revs)
  return { ...copy, truth }
}

/** The sections whose adopted rev still holds; fails when one of them no longer has the stored content. */
function stillAdopted(fragment: Y.XmlFragment, truth: Map<string, string>): string[] {
  const held: string[] = []
  for (const section of locateSections(fragment)) {
    const adopted = adoptedRev(fragment, section.sectionId, section.blocks.length)
    if (!adopted) continue
    expect(sectionRev(section.heading, section.blocks)).toBe(truth.get(section.sectionId)!)
    held.push(section.sectionId)
  }
  return held
}

function heading(id: string, text: string): Y.XmlElement {
  const element = new Y.XmlElement('heading')
  element.setAttribute('level', '2')
  element.setAttribute(HEADING_ID_ATTR, id)
  element.insert(0, [new Y.XmlText(text)])
  return element
}

/** One random edit of the fragment's top level or of an element's content. */
function edit(fragment: Y.XmlFragment, rng: Rng, n: number): void {
  const children = fragment.toArray().filter((child): child is Y.XmlElement => child instanceof Y.XmlElement)
  const at = Math.floor(rng() * (children.length + 1))
  const pick = children[Math.min(at, children.length - 1)]
  const kind = rng()
  if (kind < 0.35 && pick) {
    const text = pick.toArray().find((child): child is Y.XmlText => child instanceof Y.XmlText)
    text?.insert(Math.floor(rng() * (text.length + 1)), `t${n}`)
  } else if (kind < 0.55) {
    fragment.insert(Math.min(at, fragment.length), [paragraph(`new ${n}`)])
  } else if (kind < 0.7 && pick && children.filter((c) => c.nodeName === 'heading').length > 2) {
    fragment.delete(fragment.toArray().indexOf(pick), 1)
  } else if (kind < 0.8) {
    fragment.insert(Math.min(at, fragment.length), [heading(newHeadingId(), `Heading ${n}`)])
  } else if (kind < 0.9 && pick?.nodeName === 'heading') {
    pick.setAttribute(HEADING_ID_ATTR, newHeadingId())
  } else if (pick) {
    pick.setAttribute('textAlign', 'center')
  }
}

describe('adopted revs', () => {
  test('typing into one section leaves every other section its adopted rev; the typed one is hashed', () => {
    const { doc } = loadDocument('Doc', markdown(seededRandom(1)))
    const copy = adopting(doc)
    const before = stillAdopted(copy.fragment, copy.truth)
    expect(before.length).toBe(SECTIONS + 1) // and the title's
    const third = locateSections(copy.fragment)[3]!
    copy.doc.transact(() => (third.heading.get(0) as Y.XmlText).insert(0, 'typed '))
    expect(stillAdopted(copy.fragment, copy.truth)).toEqual(before.filter((id) => id !== third.sectionId))
    // A new paragraph typed after the sixth section's heading (Enter): that section only.
    const sixth = locateSections(copy.fragment)[6]!
    copy.doc.transact(() => copy.fragment.insert(sixth.headingIndex + 1, [paragraph('new line')]))
    expect(stillAdopted(copy.fragment, copy.truth)).toEqual(
      before.filter((id) => id !== third.sectionId && id !== sixth.sectionId),
    )
  })

  test('a heading deleted moves its blocks into the section before: both lose their revs', () => {
    const { doc, fragment } = loadDocument('Doc', markdown(seededRandom(2)))
    // Section 1 gets a block of its own first, whatever the draw gave it.
    doc.transact(() => fragment.insert(locateSections(fragment)[1]!.headingIndex + 1, [paragraph('padding')]))
    const copy = adopting(doc)
    const [one, two] = locateSections(copy.fragment).slice(1, 3)
    // The count-keeping case: a block of section 1 and the heading of section 2 deleted at once, so
    // section 1 has as many blocks as before (if section 2 had one), one of them section 2's.
    copy.doc.transact(() => {
      copy.fragment.delete(two!.headingIndex, 1)
      copy.fragment.delete(one!.headingIndex + 1, 1)
    })
    const held = stillAdopted(copy.fragment, copy.truth)
    expect(held).not.toContain(one!.sectionId)
    expect(held).not.toContain(two!.sectionId)
    expect(held.length).toBe(SECTIONS + 1 - 2)
  })

  test('random edits, alone and several in one transaction: an adopted rev always names the stored content', () => {
    let adoptedChecks = 0
    for (let seed = 1; seed <= 60; seed++) {
      const rng = seededRandom(seed)
      const { doc } = loadDocument('Doc', markdown(rng))
      const copy = adopting(doc)
      for (let round = 0; round < 12; round++) {
        const edits = 1 + Math.floor(rng() * 3)
        copy.doc.transact(() => {
          for (let e = 0; e < edits; e++) edit(copy.fragment, rng, round * 10 + e)
        })
        adoptedChecks += stillAdopted(copy.fragment, copy.truth).length
      }
    }
    // Not vacuous: most checks found sections still adopted after edits elsewhere.
    expect(adoptedChecks).toBeGreaterThan(60 * 12)
  })
})
