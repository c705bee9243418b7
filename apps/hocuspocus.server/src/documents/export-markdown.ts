/**
 * A stored document as Markdown (an export): rendered on the event loop when small, on the documents'
 * worker when large. The state is read in slices when large (loadStored) and handed to the worker without
 * a copy; the Markdown comes back as UTF-8 pieces (worker/export.ts), each given to the response body as
 * it arrives (http/api.ts, the CLI).
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

/** An export's Markdown: its UTF-8 pieces in order, each ending where a block's Markdown does. */
export type MarkdownBody = ReadableStream<Uint8Array>

export function createMarkdownExport(deps: {
  jobs: WorkerPool
  loadStored: (room: string) => Promise<StoredParts | null>
  bySlugForAdmin: (slug: string) => Promise<Result<DocumentRow>>
}) {
  const { jobs, loadStored, bySlugForAdmin } = deps

  /**
   * The whole stored document as Markdown, its title first as `# ` (an export: a running server stores
   * edits within its debounce, so the last seconds of typing may not be in it yet). Answered once its
   * first piece is rendered (streamedRender).
   */
  async function markdownOf(
    document: Pick<DocumentRow, 'room' | 'slug'>,
    /** Who asks (a user id; the CLI is 'admin'): their share of the worker for a large document. */
    requester = 'admin',
  ): Promise<Result<MarkdownBody>> {
    const loaded = await loadStored(document.room)
    if (!loaded) return notFound(document.slug)
    const bytes = (loaded.snapshot?.byteLength ?? 0) + loaded.updateBytes
    if (bytes <= EXPORT_INLINE_BYTES) return ok(markdownStream(renderExport(loaded)))
    return streamedRender(jobs, requester, loaded)
  }

  return {
    markdownOf,

    /** markdownOf by slug, for the CLI (an administrator on the machine). */
    async markdownForAdmin(slug: string): Promise<Result<MarkdownBody>> {
      const document = await bySlugForAdmin(slug)
      if (document.kind === 'error') return document
      return markdownOf(document.value)
    },
  }
}

/**
 * The worker's render as a body that starts with its first piece: each piece is given to the stream as the
 * worker makes it (transferred, and let go of here once read), so neither the worker nor the event loop
 * holds the whole file; before, both did (a 20 MiB document's 21 MB of pieces, on top of its decoded
 * state). A refusal before the first piece (the user's export already running, the queue full) is the
 * answer; a failure after it ends the stream with an error, so the connection is cut and the client sees
 * an unfinished body, never a short file that looks whole. The pieces wait here for a slow reader.
 */
async function streamedRender(
  jobs: WorkerPool,
  requester: string,
  stored: StoredParts,
): Promise<Result<MarkdownBody>> {
  let body!: ReadableStreamDefaultController<Uint8Array>
  // The reader went away (the client disconnected): the render runs to its end, its pieces dropped.
  let cancelled = false
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      body = controller
    },
    cancel() {
      cancelled = true
    },
  })
  const answer = Promise.withResolvers<Result<MarkdownBody>>()
  let begun = false
  const begin = () => {
    if (begun) return
    begun = true
    answer.resolve(ok(stream))
  }
  void jobs
    .render(requester, stored, (piece) => {
      if (!cancelled) body.enqueue(piece)
      begin()
    })
    .then((result) => {
      if (result.kind === 'error' && !begun) return answer.resolve(result)
      if (!cancelled) result.kind === 'ok' ? body.close() : body.error(new Error(result.message))
      begin()
    })
  return answer.promise
}

/**
 * Pieces rendered on the event loop as a response body: each given to the stream when the connection asks
 * for more, and let go by this side once given (never joined into one buffer or string).
 */
function markdownStream(file: MarkdownFile): MarkdownBody {
  const pieces = file.pieces.slice()
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const piece = pieces.shift()
      if (piece) controller.enqueue(piece)
      else controller.close()
    },
  })
}

/** Each piece of an export's body as it is read (the CLI, tests); throws when the render failed midway. */
export async function eachPiece(body: MarkdownBody, take: (piece: Uint8Array) => void): Promise<void> {
  const reader = body.getReader()
  for (;;) {
    const { value, done } = await reader.read()
    if (done) return
    take(value)
  }
}

/** An export's body as one text (small documents, tests): its pieces read to the end. */
export async function bodyText(body: MarkdownBody): Promise<string> {
  const decoder = new TextDecoder()
  let text = ''
  await eachPiece(body, (piece) => {
    text += decoder.decode(piece, { stream: true })
  })
  return text + decoder.decode()
}
