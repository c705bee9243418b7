/** A few DOM helpers: elements are built with text nodes only, never from HTML strings. */

type Attrs = Record<string, string | boolean | undefined | ((event: Event) => void)>
type Child = Node | string | null | undefined | false

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag)
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue
    if (typeof value === 'function') element.addEventListener(key.replace(/^on/, ''), value)
    else if (value === true) element.setAttribute(key, '')
    else element.setAttribute(key, value)
  }
  for (const child of children)
    if (child !== null && child !== undefined && child !== false) element.append(child)
  return element
}

export function clear(element: Element, ...children: Child[]): void {
  element.replaceChildren()
  for (const child of children)
    if (child !== null && child !== undefined && child !== false) element.append(child)
}

/** A stable `#rrggbb` colour for a name, until the server gives the presence colour: the only colour form drawn. */
export { colorOf } from '@collab/doc-schema/editor'

export function when(iso: string): string {
  const date = new Date(iso)
  return date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })
}
