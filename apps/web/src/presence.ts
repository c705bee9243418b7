/**
 * Presence: who has the document open (people and agents), in the header's list and as carets and
 * selections in the text.
 *
 * What the page takes from another client's awareness state before drawing it (issue 24). The server
 * fills `user` from the connection's principal (collab/awareness-guard.ts); the page checks again, since a
 * state also comes from older servers and other instances: a name is text cut to MAX_NAME_CHARS, a colour
 * is `#rrggbb` or the name's own colour (never a CSS value that could fetch a URL or restyle the page), and
 * the agent badge is only `agent: true` as the server wrote it. No other field of `user` is shown.
 */
import { colorOf, isHexColor } from '@collab/doc-schema/editor'
import { clear, h } from './dom.ts'

/** Longest name drawn for anyone present (the server cuts to the same length). */
export const MAX_NAME_CHARS = 64

export type PresentUser = { name: string; color: string; agent: boolean }

/** The user a remote awareness state shows, or null when it names nobody. */
export function presentUser(state: unknown): PresentUser | null {
  const user = (state as { user?: unknown } | null)?.user
  if (typeof user !== 'object' || user === null) return null
  const { name, color, agent } = user as Record<string, unknown>
  if (typeof name !== 'string' || name.trim() === '') return null
  const shown = Array.from(name.replace(/\s+/g, ' ').trim()).slice(0, MAX_NAME_CHARS).join('')
  return { name: shown, color: safeColor(color, shown), agent: agent === true }
}

/** `color` when it is `#rrggbb`, else a colour derived from `seed`: what may go into a style attribute. */
export function safeColor(color: unknown, seed: string): string {
  return isHexColor(color) ? color : colorOf(seed)
}

/** The awareness of the provider, as far as the list reads it. */
type Awareness = {
  getStates(): Map<number, unknown>
  on(event: 'change', listener: () => void): void
}

/**
 * Keeps `list` showing this page's person first, then everyone else present, as the awareness changes.
 * Only what presentUser keeps of each state is drawn: text names, #rrggbb colours, the server's agent flag.
 */
export function showPresence(
  list: HTMLElement,
  awareness: Awareness,
  me: { name: string; color: string },
  ownClientId: number,
): void {
  const render = () => {
    const users = [...awareness.getStates().entries()]
      .filter(([id]) => id !== ownClientId)
      .map(([, state]) => presentUser(state))
      .filter((user): user is PresentUser => user !== null)
    clear(
      list,
      h('li', { style: `--c:${me.color}`, title: 'You' }, `${me.name} (you)`),
      ...users.map((user) =>
        h(
          'li',
          {
            style: `--c:${user.color}`,
            class: user.agent ? 'agent' : '',
            'data-agent': user.agent ? 'true' : undefined,
            title: user.name,
          },
          user.agent ? `✦ ${user.name}` : user.name,
        ),
      ),
    )
  }
  awareness.on('change', render)
  render()
}

/** A remote caret: drawn only for a state that names someone, with its checked colour and text name. */
export function remoteCaret(user: Record<string, unknown>): HTMLElement {
  const shown = presentUser({ user })
  if (!shown) return h('span', { class: 'caret' })
  const element = h('span', {
    class: `caret${shown.agent ? ' agent' : ''}`,
    style: `border-color:${shown.color}`,
  })
  element.append(
    h(
      'span',
      { class: 'caret-label', style: `background:${shown.color}` },
      shown.agent ? `✦ ${shown.name}` : shown.name,
    ),
  )
  return element
}

/** A remote selection's highlight: its checked colour, or no colour for a state that names nobody. */
export function remoteSelection(user: Record<string, unknown>): Record<string, string> {
  const shown = presentUser({ user })
  return shown ? { style: `background-color: ${shown.color}70`, class: 'ProseMirror-yjs-selection' } : {}
}
