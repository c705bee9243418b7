/** What the server put in the page: who is signed in. */
export type Boot = { handle: string; name: string | null }

export function readBoot(): Boot {
  const element = document.getElementById('boot')
  return JSON.parse(element?.textContent ?? '{}') as Boot
}
