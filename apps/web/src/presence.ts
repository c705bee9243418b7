/**
 * Presence: who has the document open (people and agents), in the header's list and as carets and
 * selections in the text.
 *
 * What the page takes from another client's awareness state before drawing it (issue 24). The server
 * fills `user` from the connection's principal (collab/awareness-guard.ts); the page checks again, since a
 * state also comes from older servers and other instances: a name is text cut to MAX_NAME_CHARS, a colour
 * is `#rrggbb` or the name's own colour (never a CSS value that could fetch a URL or restyle the page), and
 * the agent badge is only `agent: true` as the server wrote it. No other field of `user` is shown.
 *
 * Colours are settled across instances: two instances (Redis) can give two people one colour, so the page
 * draws each person in the colour settleColors (@collab/doc-schema) gives their presence key (`user.key`,
 * the server's) among everyone present, this page's person included: the smallest key keeps the colour,
 * the others take the next free one. Every page sees the same states, so every page draws the same
 * colours, and a person is shown to themselves in the colour the others see. A state without a key (an
 * older server, the server's own agent) keeps its colour, which a settled one then does not take.
 */
import { colorOf, isHexColor, isPresenceKey, settleColors } from '@collab/doc-schema/editor'
import { clear, h } from './dom.ts'

/** Longest name drawn for anyone present (the server cuts to the same length). */
export const MAX_NAME_CHARS = 64

export type PresentUser = { name: string; color: string; agent: boolean; key?: string }

/** The user a remote awareness state shows, or null when it names nobody. */
export function presentUser(state: unknown): PresentUser | null {
  const user = (state as { user?: unknown } | null)?.user
  if (typeof user !== 'object' || user === null) return null
  const { name, color, agent, key } = user as Record<string, unknown>
  if (typeof name !== 'string' || name.trim() === '') return null
  const shown = Array.from(name.replace(/\s+/g, ' ').trim()).slice(0, MAX_NAME_CHARS).join('')
  const present: PresentUser = { name: shown, color: safeColor(color, shown), agent: agent === true }
  if (isPresenceKey(key)) present.key = key
  return present
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

export type PresenceList = {
  /** What the server says this page's person is shown as to the others (its `presence` notice). */
  setMe(user: unknown): void
  /** A remote caret (the editor's CollaborationCaret `render`), in its settled colour. */
  caret(user: Record<string, unknown>): HTMLElement
  /** A remote selection's highlight (CollaborationCaret's `selectionRender`), in its settled colour. */
  selection(user: Record<string, unknown>): Record<string, string>
}

/** One entry of the list: a swatch of the colour (an agent's a diamond) and the name (an agent's marked ✦). */
function entry(user: PresentUser, you: boolean): HTMLElement {
  return h(
    'li',
    {
      style: `--c:${user.color}`,
      class: user.agent ? 'agent' : 'person',
      'data-agent': user.agent ? 'true' : undefined,
      title: you ? 'You' : user.agent ? `${user.name}: a program acting for that person` : user.name,
    },
    h('span', { class: 'swatch', 'aria-hidden': 'true' }),
    h('span', { class: 'who' }, you ? `${user.name} (you)` : user.agent ? `✦ ${user.name}` : user.name),
  )
}

/**
 * Keeps `list` showing this page's person first, then the other people, then agents, as the awareness
 * changes; `count` says how many are here. Only what presentUser keeps of each state is drawn: text
 * names, #rrggbb colours, the server's agent flag; each in its settled colour, as are the carets.
 */
export function showPresence(
  list: HTMLElement,
  count: HTMLElement,
  awareness: Awareness,
  initial: { name: string; color: string },
  ownClientId: number,
): PresenceList {
  let me: PresentUser = { ...initial, agent: false }
  /** The colour of each presence key, as settleColors gave it for the claims last seen. */
  let settled = new Map<string, string>()
  let claimsSeen = ''
  /** Settles everyone's colours (this page's person too) when the claims changed; whether they did. */
  const settle = (others: PresentUser[]): boolean => {
    const everyone = [me, ...others]
    const claims = everyone.flatMap((u) => (u.key ? [{ key: u.key, color: u.color }] : []))
    const reserved = everyone.flatMap((u) => (u.key ? [] : [u.color]))
    const signature = JSON.stringify([claims.map((c) => `${c.key}${c.color}`).sort(), reserved.sort()])
    if (signature === claimsSeen) return false
    claimsSeen = signature
    settled = settleColors(claims, reserved)
    return true
  }
  const shown = (user: PresentUser): PresentUser =>
    user.key ? { ...user, color: settled.get(user.key) ?? user.color } : user
  // What the list shows, as text: the awareness changes at every keystroke (the carets move), the list
  // only when someone comes, goes or is shown otherwise, so it is drawn again only then.
  let drawn = ''
  const render = () => {
    const users = [...awareness.getStates().entries()]
      .filter(([id]) => id !== ownClientId)
      .map(([, state]) => presentUser(state))
      .filter((user): user is PresentUser => user !== null)
    // A caret already drawn keeps its element (the editor keys it by clientId): a colour that moved is
    // repainted in place.
    if (settle(users)) repaintCarets(settled)
    const people = users.filter((user) => !user.agent).map(shown)
    const agents = users.filter((user) => user.agent).map(shown)
    const mine = shown(me)
    const key = JSON.stringify([mine, people, agents])
    if (key === drawn) return
    drawn = key
    clear(
      list,
      entry(mine, true),
      ...people.map((u) => entry(u, false)),
      ...agents.map((u) => entry(u, false)),
    )
    const others = people.length + agents.length
    count.textContent = others === 0 ? 'Only you' : `${others + 1} here`
  }
  awareness.on('change', render)
  render()
  return {
    setMe(user) {
      const present = presentUser({ user })
      if (!present) return
      me = present
      render()
    },
    caret: (user) => remoteCaret(user, settled),
    selection: (user) => remoteSelection(user, settled),
  }
}

/** The user a caret or selection draws, in its settled colour. */
function settledUser(user: Record<string, unknown>, settled: Map<string, string>): PresentUser | null {
  const present = presentUser({ user })
  if (present?.key) present.color = settled.get(present.key) ?? present.color
  return present
}

/** Every remote caret on the page drawn again in its key's settled colour (always a #rrggbb colour). */
function repaintCarets(settled: Map<string, string>): void {
  for (const caret of Array.from(document.querySelectorAll<HTMLElement>('.caret[data-presence-key]'))) {
    const color = settled.get(caret.dataset.presenceKey ?? '')
    if (!color) continue
    caret.style.borderColor = color
    const label = caret.querySelector('.caret-label') as HTMLElement | null
    if (label) label.style.background = color
  }
}

/** A remote caret: drawn only for a state that names someone, with its checked colour and text name. */
export function remoteCaret(user: Record<string, unknown>, settled = new Map<string, string>()): HTMLElement {
  const shown = settledUser(user, settled)
  if (!shown) return h('span', { class: 'caret' })
  const element = h('span', {
    class: `caret${shown.agent ? ' agent' : ''}`,
    style: `border-color:${shown.color}`,
    'data-presence-key': shown.key,
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
export function remoteSelection(
  user: Record<string, unknown>,
  settled = new Map<string, string>(),
): Record<string, string> {
  const shown = settledUser(user, settled)
  return shown ? { style: `background-color: ${shown.color}70`, class: 'ProseMirror-yjs-selection' } : {}
}
