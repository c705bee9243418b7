import type { Boot } from './boot.ts'
import { h } from './dom.ts'

/** The bar on every page: home, who is signed in, their account page (connected apps, sign-out). */
export function header(boot: Boot, ...middle: (Node | string)[]): HTMLElement {
  return h(
    'header',
    { class: 'bar' },
    h('a', { href: '/', class: 'home' }, 'Documents'),
    h('div', { class: 'middle' }, ...middle),
    h(
      'a',
      { href: '/apps', class: 'account', title: 'Connected apps, password and sign-out' },
      boot.name ?? boot.handle,
    ),
  )
}
