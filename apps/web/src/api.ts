/** The page's calls to /api: same origin, the browser's session cookie, JSON in and out. */

export type DocumentSummary = {
  slug: string
  title: string
  whose: string
  private: boolean
  readOnly: boolean
  room: string
  updatedAt: string
  /** With a search, the text around the match (at most SEARCH_SNIPPET_CHARS, 160), shown as text. */
  snippet?: string
}

export type DocumentInfo = DocumentSummary & { canWrite: boolean }

/** A chat message; `app` is the app an agent posted through (null: the person wrote it in the page). */
export type ChatMessage = { seq: number; author: string; app: string | null; text: string; createdAt: string }

/** A refusal from the server: its message says what is wrong and what to do. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message)
  }
}

export async function api<T>(
  path: string,
  init: { method?: string; json?: unknown; body?: BodyInit; type?: string } = {},
): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' }
  let body = init.body
  if (init.json !== undefined) {
    headers['content-type'] = 'application/json'
    body = JSON.stringify(init.json)
  } else if (init.type) headers['content-type'] = init.type
  const response = await fetch(`/api${path}`, {
    method: init.method ?? 'GET',
    headers,
    body,
    credentials: 'same-origin',
  })
  if (response.status === 401) {
    // The session ended (signed out elsewhere, expired): sign in again and come back here.
    location.assign(`/sign-in?next=${encodeURIComponent(location.pathname)}`)
    throw new ApiError('signed out', 401)
  }
  const data = (await response.json().catch(() => null)) as { message?: string } | null
  if (!response.ok)
    throw new ApiError(data?.message ?? `${response.status} ${response.statusText}`, response.status)
  return data as T
}

export const slugPath = (slug: string) => `/documents/${encodeURIComponent(slug)}`
