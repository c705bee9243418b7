/**
 * A stored document as Markdown (an export): rendered on the event loop when small, on the documents'
 * worker when large. The state is read in slices when large (loadStored) and handed to the worker without
 * a copy; the Markdown comes back as UTF-8 pieces (worker/export.ts), sent on one at a time (http/api.ts).
 */
import { ok, type Result } from '@collab/doc-schema'
import { type DocumentRow, notFound } from './rows.ts'
import type { StoredParts } from './stored-parts.ts'
import { type MarkdownFile, renderExport } from './worker/export.ts'
import type { WorkerPool } from './worker/pool.ts'

/**
 * Stored bytes (snapshot and log) up to which an export is rendered on the event loop: ~10-30 ms of work,
 * less than a round trip through the worker's queue, which may be behind a large import. Larger documents
 * are rendered on the worker (a 22 MB state took seconds).
 */
export const EXPORT_INLINE_BYTES = 256 * 1024

export function createMarkdownExport(deps: {
  jobs: WorkerPool
  loadStored: (room: string) => Promise<StoredParts | null>
  bySlugForAdmin: (slug: string) => Promise<Result<DocumentRow>>
}) {
  const { jobs, loadStored, bySlugForAdmin } = deps

  /**
   * The whole stored document as Markdown, its title first as `# ` (an export: a running server stores
   * edits within its debounce, so the last seconds of typing may not be in it yet).
   */
  async function markdownOf(
    document: Pick<DocumentRow, 'room' | 'slug'>,
    /** Who asks (a user id; the CLI is 'admin'): their share of the worker for a large document. */
    requester = 'admin',
  ): Promise<Result<MarkdownFile>> {
    const loaded = await loadStored(document.room)
    if (!loaded) return notFound(document.slug)
    const bytes = (loaded.snapshot?.byteLength ?? 0) + loaded.updateBytes
    if (bytes <= EXPORT_INLINE_BYTES) return ok(renderExport(loaded))
    return jobs.render(requester, loaded)
  }

  return {
    markdownOf,

    /** markdownOf by slug, for the CLI (an administrator on the machine). */
    async markdownForAdmin(slug: string): Promise<Result<MarkdownFile>> {
      const document = await bySlugForAdmin(slug)
      if (document.kind === 'error') return document
      return markdownOf(document.value)
    },
  }
}

/**
 * An export's pieces as a response body: each piece is given to the stream when the connection asks for
 * more, and let go by this side once given (never joined into one buffer or string).
 */
export function markdownStream(file: MarkdownFile): ReadableStream<Uint8Array> {
  const pieces = file.pieces.slice()
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const piece = pieces.shift()
      if (piece) controller.enqueue(piece)
      else controller.close()
    },
  })
}
