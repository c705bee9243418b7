// Sums JUnit reports from `bun test --reporter=junit` into one line: "N passed, N failed, N skipped".
let tests = 0
let failed = 0
let skipped = 0
const files = process.argv.slice(2)
for (const file of files) {
  const xml = await Bun.file(file).text()
  const top = /<testsuites\b[^>]*>/.exec(xml)?.[0]
  if (!top) {
    failed++ // a run that wrote no report counts as a failure
    continue
  }
  const attr = (name: string) => Number(new RegExp(`\\b${name}="(\\d+)"`).exec(top)?.[1] ?? 0)
  tests += attr('tests')
  failed += attr('failures') + attr('errors')
  skipped += attr('skipped')
}
if (files.length === 0) failed++
console.log(`${tests - failed - skipped} passed, ${failed} failed, ${skipped} skipped`)
