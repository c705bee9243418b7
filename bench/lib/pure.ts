/** Measurements 1 and 2: outline, section read and whole read, cold and warm, in process. */

import { MAX_READ_CHARS } from '../../apps/hocuspocus.server/src/modules/mcp/limits.ts'
import { outlineLines } from '../../apps/hocuspocus.server/src/modules/mcp/render/outline.ts'
import { readWholeDocument } from '../../apps/hocuspocus.server/src/modules/mcp/render/whole-read.ts'
import { FRAGMENT_NAME, readOutline, renderSection } from '../../packages/doc-schema/src/index.ts'
import { createOutlineMemo } from '../../packages/doc-schema/src/sections/outline-memo.ts'
import { Y, type YDoc, type YXmlFragment } from '../deps.ts'
import type { Fixture } from './fixtures.ts'
import { naiveOutlineLines, naiveSection, naiveWholeRead } from './naive.ts'
import { timeSideBySide } from './stats.ts'
import type { Row } from './types.ts'

type Frag = Parameters<typeof readOutline>[0]
const asFrag = (f: YXmlFragment) => f as unknown as Frag

function decode(state: Uint8Array): YDoc {
  const doc = new Y.Doc()
  Y.applyUpdate(doc, state)
  return doc
}

const oursOutline = (f: YXmlFragment) => outlineLines(readOutline(asFrag(f))).join('\n')
const oursSection = (f: YXmlFragment, id: string) => {
  const r = renderSection(asFrag(f), id, { maxChars: MAX_READ_CHARS })
  if (r.kind === 'error') throw new Error(r.message)
  return `${r.value.rev}\n${r.value.text}`
}
/** read_document's whole read: Markdown rendered block by block up to the cap, then the line walk. */
const oursWhole = (f: YXmlFragment) => readWholeDocument(asFrag(f), MAX_READ_CHARS).text

/** Cold: state bytes → answer in a throwaway doc (destroyed after timing). */
function cold(run: (f: YXmlFragment) => unknown) {
  const docs: YDoc[] = []
  return {
    run: (state: unknown) => {
      const doc = decode(state as Uint8Array)
      docs.push(doc)
      return run(doc.getXmlFragment(FRAGMENT_NAME))
    },
    prepare: () => {
      for (const d of docs.splice(0)) d.destroy()
      return undefined
    },
  }
}

export function measurePure(fixture: Fixture, runs: number, quick = false): Row[] {
  const rows: Row[] = []
  const { state, name: size } = fixture
  const base = { size, stateBytes: state.length }
  const withState = (v: ReturnType<typeof cold>) => ({
    prepare: () => {
      v.prepare()
      return state
    },
    run: v.run,
  })

  // 1. Outline, cold. The server answers a cold get_outline from the outline its store step saved with
  // the state (document_states.outline, JSON): "stored" is that JSON → outline text. "decode" is the path
  // for a row stored without one: decode the state, then readOutline.
  const storedJson = (() => {
    const d = decode(state)
    const json = JSON.stringify(readOutline(asFrag(d.getXmlFragment(FRAGMENT_NAME))))
    d.destroy()
    return json
  })()
  const outlineCold = timeSideBySide(runs, {
    floor: withState(cold(() => 0)),
    stored: { run: () => outlineLines(JSON.parse(storedJson)).join('\n') },
    decode: withState(cold(oursOutline)),
    naive: withState(cold((f) => naiveOutlineLines(f).join('\n'))),
  })
  rows.push({
    measure: 'outline, cold',
    ...base,
    variants: outlineCold,
    ratios: {
      'stored / floor': outlineCold.stored.median / outlineCold.floor.median,
      'decode / floor': outlineCold.decode.median / outlineCold.floor.median,
      'naive / stored': outlineCold.naive.median / outlineCold.stored.median,
    },
    extra: { 'stored outline bytes': storedJson.length },
    target:
      size === '5 MiB'
        ? {
            text: 'ours (stored outline) ≤ 1.3× decode floor at 5 MiB',
            met: outlineCold.stored.median / outlineCold.floor.median <= 1.3,
          }
        : undefined,
  })

  // Warm: the document is live (decoded once); the memo is what a live reader keeps per document.
  const doc = decode(state)
  const fragment = doc.getXmlFragment(FRAGMENT_NAME)
  const memo = createOutlineMemo(asFrag(fragment))
  const outlineWarm = timeSideBySide(runs, {
    ours: { run: () => oursOutline(fragment) },
    memo: { run: () => outlineLines(memo.outline()).join('\n') },
    naive: { run: () => naiveOutlineLines(fragment).join('\n') },
  })
  const warmSpeedup = outlineWarm.naive.median / outlineWarm.memo.median
  rows.push({
    measure: 'outline, warm',
    ...base,
    variants: outlineWarm,
    ratios: {
      'naive / ours (memo)': warmSpeedup,
      'naive / ours (no memo)': outlineWarm.naive.median / outlineWarm.ours.median,
    },
    target:
      size === '100 KiB'
        ? undefined
        : { text: 'ours ≥ 10× faster than naive at ≥ 1 MiB', met: warmSpeedup >= 10 },
  })

  // 2. Section read (middle section) and whole read to the cap, warm then cold.
  const id = fixture.middleSectionId
  const sectionWarm = timeSideBySide(runs, {
    ours: { run: () => oursSection(fragment, id) },
    naive: { run: () => naiveSection(fragment, id) },
  })
  const sectionSpeedup = sectionWarm.naive.median / sectionWarm.ours.median
  rows.push({
    measure: 'section read, warm',
    ...base,
    variants: sectionWarm,
    ratios: { 'naive / ours': sectionSpeedup },
    target:
      size === '100 KiB'
        ? undefined
        : { text: 'ours ≥ 5× faster than naive at ≥ 1 MiB', met: sectionSpeedup >= 5 },
  })
  const wholeWarm = timeSideBySide(runs, {
    ours: { run: () => oursWhole(fragment) },
    naive: { run: () => naiveWholeRead(fragment, MAX_READ_CHARS) },
  })
  rows.push({
    measure: 'whole read to cap, warm',
    ...base,
    variants: wholeWarm,
    ratios: { 'naive / ours': wholeWarm.naive.median / wholeWarm.ours.median },
  })
  memo.destroy()
  doc.destroy()

  const sectionCold = timeSideBySide(runs, {
    floor: withState(cold(() => 0)),
    ours: withState(cold((f) => oursSection(f, id))),
    naive: withState(cold((f) => naiveSection(f, id))),
  })
  rows.push({
    measure: 'section read, cold',
    ...base,
    variants: sectionCold,
    ratios: {
      'ours / floor': sectionCold.ours.median / sectionCold.floor.median,
      'naive / ours': sectionCold.naive.median / sectionCold.ours.median,
    },
  })
  // The whole read costs ~1 s per run at 1 MiB: the quick (CI) run times it warm only.
  if (quick && state.length > 512 * 1024) return rows
  const wholeCold = timeSideBySide(runs, {
    floor: withState(cold(() => 0)),
    ours: withState(cold(oursWhole)),
    naive: withState(cold((f) => naiveWholeRead(f, MAX_READ_CHARS))),
  })
  rows.push({
    measure: 'whole read to cap, cold',
    ...base,
    variants: wholeCold,
    ratios: {
      'ours / floor': wholeCold.ours.median / wholeCold.floor.median,
      'naive / ours': wholeCold.naive.median / wholeCold.ours.median,
    },
  })
  return rows
}
