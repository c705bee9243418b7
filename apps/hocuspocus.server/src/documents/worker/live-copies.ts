/**
 * The event loop's side of the live documents' copies on the documents' worker (read.ts renderLivePrefix):
 * which copy each live Y.Doc has and the state vector the worker last took, so a whole read sends only what
 * changed since (`Y.encodeStateAsUpdate(doc, vector)`: 0.3 ms for an edit of one letter in the red team's
 * paragraph of 10,000 marks, against 27 ms for its whole 470 KB state). The worker may have lost the copy
 * (it ends when idle, after a deadline, or evicts the least recently read): it then answers `stale` and
 * the whole state is sent once.
 */
import type { MarkdownPrefix, Result, SerializeOptions } from '@collab/doc-schema'
import { ok } from '@collab/doc-schema'
import * as Y from 'yjs'
import { MAX_LIVE_COPIES } from '../../limits.ts'
import type { SectionChange } from '../history-diff.ts'
import type { ChangesAsk, LiveReadInput, LiveReadReply, PrefixAsk } from './read.ts'
import type { SectionAsk, SectionReadResult } from './read-section.ts'

type Copy = { key: string; vector: Uint8Array | null }

/** Runs one live read job (the pool's readPrefix for `user`). */
export type RunLiveRead = (input: LiveReadInput) => Promise<Result<LiveReadReply>>

export class LiveCopies {
  private readonly copies = new WeakMap<Y.Doc, Copy>()
  /** Copies of documents destroyed (unloaded) since the last read: the next read drops them on the worker. */
  private dropped: string[] = []
  private nextKey = 1
  /** Bytes of the updates sent for reads, by whether they were whole states or changes (tests, metrics). */
  readonly sent = { whole: 0, changes: 0 }

  /**
   * `documentMarkdownPrefix` of the live document, rendered on its copy on the worker: only what changed
   * since the worker's copy is encoded here, unless the copy is new or lost (then the whole state, once).
   */
  async readPrefix(
    doc: Y.Doc,
    minChars: number,
    opts: SerializeOptions,
    run: RunLiveRead,
  ): Promise<Result<MarkdownPrefix>> {
    const reply = await this.read(doc, { minChars, opts }, run)
    return reply.kind === 'error' ? reply : ok(reply.value.prefix as MarkdownPrefix)
  }

  /**
   * A section read of the document on the worker (read-section.ts): on the live document's copy, as
   * `readPrefix`; with `keep` false (a cold read's throwaway document) on a copy made from its whole state
   * for this read alone.
   */
  async readSection(
    doc: Y.Doc,
    ask: SectionAsk,
    keep: boolean,
    run: RunLiveRead,
  ): Promise<Result<SectionReadResult>> {
    if (!keep) {
      const reply = await run({ key: '', base: null, update: Y.encodeStateAsUpdate(doc), drop: [], ...ask })
      return reply.kind === 'error' ? reply : ok(reply.value.section as SectionReadResult)
    }
    const reply = await this.read(doc, ask, run)
    return reply.kind === 'error' ? reply : ok(reply.value.section as SectionReadResult)
  }

  /**
   * What changed in the live document since the version whose state is `since` (changes_since), compared
   * on its copy on the worker, as `readPrefix` renders there.
   */
  async readChanges(
    doc: Y.Doc,
    since: Uint8Array | null,
    run: RunLiveRead,
  ): Promise<Result<SectionChange[]>> {
    const reply = await this.read(doc, { changesSince: since }, run)
    return reply.kind === 'error' ? reply : ok(reply.value.changes as SectionChange[])
  }

  /** The reply of `ask` on the document's copy: the copy brought up to date first (or made anew once). */
  private async read(
    doc: Y.Doc,
    ask: PrefixAsk | SectionAsk | ChangesAsk,
    run: RunLiveRead,
  ): Promise<Result<LiveReadReply>> {
    const copy = this.copyOf(doc)
    for (let whole = copy.vector === null; ; whole = true) {
      // The update and the vector it brings the copy to, encoded together: nothing runs between the two.
      const base = whole ? null : copy.vector
      const update = base ? Y.encodeStateAsUpdate(doc, base) : Y.encodeStateAsUpdate(doc)
      const vector = Y.encodeStateVector(doc)
      if (base) this.sent.changes += update.byteLength
      else this.sent.whole += update.byteLength
      const drop = this.dropped.splice(0)
      const reply = await run({
        key: copy.key,
        // The job's arrays are transferred to the worker: the vector kept here is not one of them.
        base: base ? base.slice() : null,
        update,
        drop,
        ...ask,
      })
      if (reply.kind === 'error') {
        this.dropped.push(...drop)
        return reply
      }
      if (reply.value.stale) {
        if (whole) throw new Error('the worker found a whole state stale') // never: a whole state needs no base
        continue
      }
      copy.vector = vector
      return reply
    }
  }

  private copyOf(doc: Y.Doc): Copy {
    let copy = this.copies.get(doc)
    if (!copy) {
      const made: Copy = { key: `live-${this.nextKey++}`, vector: null }
      doc.on('destroy', () => {
        // More than the worker can hold are evicted there anyway, least recently read first.
        this.dropped.push(made.key)
        if (this.dropped.length > MAX_LIVE_COPIES) this.dropped.shift()
      })
      this.copies.set(doc, made)
      copy = made
    }
    return copy
  }
}
