/**
 * How links and images are escaped on the way out (the text around them: escape-text.ts): `&` in a target
 * or title only before a character reference, the brackets of a link's text or an image's alt only where
 * they do not balance, and a target's parentheses only where they do not balance.
 */
import type { Image, Link, Nodes } from 'mdast'
import type { Handle, Unsafe } from 'mdast-util-to-markdown'

/** What follows `&` in a character reference (`&amp;`, `&#35;`, `&#x23;`): only then is `&` escaped. */
export const CHARACTER_REFERENCE = '(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{0,31});'

/** In link and image destinations and titles: `&` only before a character reference (decoded there). */
const DESTINATION_AMP: Unsafe = {
  character: '&',
  after: CHARACTER_REFERENCE,
  inConstruct: ['destinationLiteral', 'destinationRaw', 'titleApostrophe', 'titleQuote'],
}

/** Derived pattern lists, cached per list they derive from (the state's list is fixed per serialisation). */
export function derived(cache: WeakMap<Unsafe[], Unsafe[]>, from: Unsafe[], make: () => Unsafe[]): Unsafe[] {
  let list = cache.get(from)
  if (!list) {
    list = make()
    cache.set(from, list)
  }
  return list
}

const destinationUnsafe = new WeakMap<Unsafe[], Unsafe[]>()
const balancedLabelUnsafe = new WeakMap<Unsafe[], Unsafe[]>()
const balancedTargetUnsafe = new WeakMap<Unsafe[], Unsafe[]>()

/** The library's `(`/`)` rules in a raw destination: not needed where the target's parentheses balance. */
const isDestinationParenthesis = (pattern: Unsafe) =>
  (pattern.character === '(' || pattern.character === ')') && pattern.inConstruct === 'destinationRaw'

/** Whether the parentheses of a link target balance, as markdown-it reads a raw destination (≤ 32 deep). */
function parenthesesBalanced(url: string): boolean {
  let depth = 0
  for (let at = 0; at < url.length; at++) {
    const code = url.charCodeAt(at)
    if (code === 40 && ++depth > 32) return false
    if (code === 41 && --depth < 0) return false
  }
  return depth === 0
}

/** A bracket rule other than at a line start: inside a label whose brackets balance, none is needed. */
const isLabelBracket = (pattern: Unsafe) =>
  (pattern.character === '[' || pattern.character === ']') && pattern.atBreak !== true

/** Characters of a label's text, code spans left out (brackets in them do not count there). */
function labelText(node: Nodes): string {
  if (node.type === 'text') return node.value
  if (node.type === 'inlineCode') return ''
  if (node.type === 'image') return node.alt ?? ''
  return 'children' in node ? node.children.map(labelText).join('') : ''
}

/**
 * The longest link text whose brackets are written as they are when they balance: a bounded read does not
 * rely on the characters just before its cut (CUT_MARK_MARGIN, block-prefix.ts), which covers it.
 */
export const LABEL_LOOKAHEAD_CHARS = 200

/** An image, or a link holding only images (a badge): its label is alt text (an attribute, never cut). */
const altOnly = (node: Link | Image) =>
  node.type === 'image' || node.children.every((child) => child.type === 'image')

/** Whether every `]` in `text` closes a `[` before it and every `[` is closed. */
function bracketsBalanced(text: string): boolean {
  let depth = 0
  for (let at = 0; at < text.length; at++) {
    const code = text.charCodeAt(at)
    if (code === 91) depth++
    else if (code === 93 && --depth < 0) return false
  }
  return depth === 0
}

/**
 * A link or image handler of the library with `&` in its destination and title escaped only before a
 * character reference (`?a=1&b=2` stays as written), with the brackets of its text or alt written as they
 * are when they balance there, and the parentheses of its target when they balance (`Shebang_(Unix)`); its
 * text goes through `textHandler` as usual.
 */
export function withNarrowAmpersand(handler: Handle): Handle {
  return (node, parent, state, info) => {
    const saved = state.unsafe
    let list = derived(destinationUnsafe, saved, () => [
      ...saved.filter((pattern) => pattern.character !== '&'),
      DESTINATION_AMP,
    ])
    // A link's text can be cut short by a bounded read (block-prefix.ts), where brackets balanced in the
    // whole text may not be in its start: only a short one decides, within what a cut read does not rely on.
    const label = labelText(node as Link | Image)
    const whole = altOnly(node as Link | Image) || label.length <= LABEL_LOOKAHEAD_CHARS
    if (whole && bracketsBalanced(label)) {
      const base = list
      list = derived(balancedLabelUnsafe, base, () => base.filter((pattern) => !isLabelBracket(pattern)))
    }
    if ((node as Link | Image).url.includes('(') && parenthesesBalanced((node as Link | Image).url)) {
      const base = list
      list = derived(balancedTargetUnsafe, base, () =>
        base.filter((pattern) => !isDestinationParenthesis(pattern)),
      )
    }
    state.unsafe = list
    try {
      return handler(node, parent, state, info)
    } finally {
      state.unsafe = saved
    }
  }
}
