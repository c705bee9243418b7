/**
 * The judged set of search-relevance.test.ts: real files under node_modules (the packages the Markdown
 * import test reads, plus qs, body-parser and express, which the probes came from), and queries
 * written by reading them, each with the documents that should come first (the first one is the one the
 * query is about) and the heading of the section that should come first in it (a list: either is right).
 * Judged by what a reader asking that query wants, before the ranking was run; kinds mixed on purpose:
 * topic words, other forms of a word, headings, API names as written (dots, parentheses, camel case),
 * versions, phrases, and terms copied with Markdown escapes.
 */

/** Key → path under node_modules/.bun/node_modules. */
export const RELEVANCE_FILES = {
  commander: 'commander/Readme.md',
  fastCheck: 'fast-check/README.md',
  d3Geo: 'd3-geo/README.md',
  betterResult: 'better-result/README.md',
  gfmTable: 'mdast-util-gfm-table/readme.md',
  qsReadme: 'qs/README.md',
  qsChangelog: 'qs/CHANGELOG.md',
  bodyParser: 'body-parser/README.md',
  express: 'express/Readme.md',
  acceptsReadme: 'accepts/README.md',
  acceptsHistory: 'accepts/HISTORY.md',
  httpErrorsReadme: 'http-errors/README.md',
  httpErrorsHistory: 'http-errors/HISTORY.md',
  eventsource: 'eventsource/README.md',
  encodeurl: 'encodeurl/README.md',
  functionBind: 'function-bind/CHANGELOG.md',
} as const

export type RelevanceKey = keyof typeof RELEVANCE_FILES

export type JudgedQuery = {
  query: string
  /** The documents that should come first; the section is judged in the first. */
  documents: RelevanceKey[]
  /** The heading (as find_sections shows it) of the section that should come first. */
  section: string | string[]
}

export const JUDGED_QUERIES: JudgedQuery[] = [
  // commander
  { query: 'variadic option', documents: ['commander'], section: 'Variadic option' },
  {
    query: 'negatable boolean',
    documents: ['commander'],
    section: 'Other option types, negatable boolean and boolean|value',
  },
  { query: 'parseAsync', documents: ['commander'], section: '.parse() and .parseAsync()' },
  { query: '.parseAsync()', documents: ['commander'], section: '.parse() and .parseAsync()' },
  { query: 'exitOverride', documents: ['commander'], section: 'Override exit and output handling' },
  { query: 'life cycle hooks', documents: ['commander'], section: 'Life cycle hooks' },
  { query: 'preAction', documents: ['commander'], section: 'Life cycle hooks' },
  {
    query: 'stand-alone executable',
    documents: ['commander'],
    section: 'Stand-alone executable (sub)commands',
  },
  { query: 'help after errors', documents: ['commander'], section: 'Display help after errors' },
  // fast-check
  { query: 'shrink', documents: ['fastCheck'], section: 'Why should I migrate to fast-check?' },
  { query: 'shrinking', documents: ['fastCheck'], section: 'Why should I migrate to fast-check?' },
  { query: 'sponsors', documents: ['fastCheck'], section: 'Sponsors 💸' },
  { query: 'property based testing', documents: ['fastCheck'], section: ['Getting started', 'fast-check'] },
  // d3-geo
  { query: 'stereographic', documents: ['d3Geo'], section: 'Azimuthal Projections' },
  { query: 'Equal Earth', documents: ['d3Geo'], section: 'Equal-Earth' },
  { query: 'conic projections', documents: ['d3Geo'], section: 'Conic Projections' },
  { query: 'spherical shapes', documents: ['d3Geo'], section: 'Spherical Shapes' },
  { query: 'geoPath', documents: ['d3Geo'], section: 'Paths' },
  { query: 'clipAngle', documents: ['d3Geo'], section: ['Paths', 'Projections', 'Clipping'] },
  { query: 'projection', documents: ['d3Geo'], section: 'Projections' },
  // better-result
  { query: 'tagged errors', documents: ['betterResult'], section: 'Tagged Errors' },
  {
    query: 'Result.gen',
    documents: ['betterResult'],
    section: ['Generator Composition', 'Yielding Tagged Errors in Result.gen'],
  },
  {
    query: 'Result\\.gen',
    documents: ['betterResult'],
    section: ['Generator Composition', 'Yielding Tagged Errors in Result.gen'],
  },
  { query: 'retry', documents: ['betterResult'], section: 'Retry Support' },
  { query: 'retrying', documents: ['betterResult'], section: 'Retry Support' },
  { query: 'panic', documents: ['betterResult'], section: 'Panic' },
  { query: 'UnhandledException', documents: ['betterResult'], section: 'UnhandledException' },
  { query: 'serialization', documents: ['betterResult'], section: 'Serialization' },
  // mdast-util-gfm-table
  { query: 'stringLength', documents: ['gfmTable'], section: 'Example: stringLength' },
  { query: 'gfmTableToMarkdown', documents: ['gfmTable'], section: 'gfmTableToMarkdown(options?)' },
  { query: 'alignType', documents: ['gfmTable'], section: 'alignType' },
  // qs
  { query: 'arrayFormat', documents: ['qsReadme', 'qsChangelog'], section: 'Stringifying' },
  {
    query: 'allowDots',
    documents: ['qsReadme', 'qsChangelog'],
    section: ['Stringifying', 'Parsing Objects'],
  },
  { query: 'parsing arrays', documents: ['qsReadme'], section: 'Parsing Arrays' },
  {
    query: 'RFC 3986',
    documents: ['qsReadme'],
    section: 'Encoding formats: RFC 3986, RFC 1738, and WHATWG',
  },
  {
    query: 'special character sets',
    documents: ['qsReadme'],
    section: 'Dealing with special character sets',
  },
  { query: '6.14.1', documents: ['qsChangelog'], section: '6.14.1' },
  { query: '6.12.3', documents: ['qsChangelog'], section: '6.12.3' },
  { query: '6.17.0', documents: ['qsChangelog'], section: '6.17.0' },
  // body-parser
  { query: 'reviver', documents: ['bodyParser'], section: 'reviver' },
  { query: 'inflate', documents: ['bodyParser'], section: 'inflate' },
  { query: 'bodyParser.urlencoded', documents: ['bodyParser'], section: 'bodyParser.urlencoded([options])' },
  { query: 'bodyParser.json', documents: ['bodyParser'], section: 'bodyParser.json([options])' },
  { query: 'defaultCharset', documents: ['bodyParser'], section: 'defaultCharset' },
  // express
  { query: 'Technical Committee', documents: ['express'], section: 'TC (Technical Committee)' },
  { query: 'philosophy', documents: ['express'], section: 'Philosophy' },
  { query: 'running tests', documents: ['express'], section: 'Running Tests' },
  // accepts
  {
    query: 'negotiation',
    documents: ['acceptsReadme', 'acceptsHistory', 'express'],
    section: 'Simple type negotiation',
  },
  { query: '.languages()', documents: ['acceptsReadme'], section: '.languages()' },
  { query: '1.3.8', documents: ['acceptsHistory'], section: '1.3.8 / 2022-02-02' },
  // http-errors
  {
    query: 'createError',
    documents: ['httpErrorsReadme', 'httpErrorsHistory'],
    // Two sections document createError's two call forms; the query names neither.
    section: [
      'createError([status], [message], [properties])',
      'createError([status], [error], [properties])',
    ],
  },
  {
    query: 'isHttpError',
    documents: ['httpErrorsReadme', 'httpErrorsHistory'],
    section: 'createError.isHttpError(val)',
  },
  { query: 'list of all constructors', documents: ['httpErrorsReadme'], section: 'List of all constructors' },
  // eventsource
  {
    query: 'unauthorized HTTPS requests',
    documents: ['eventsource'],
    section: 'Allow unauthorized HTTPS requests',
  },
  { query: 'migrating from v1', documents: ['eventsource'], section: 'Migrating from v1 / v2' },
  { query: 'proxy', documents: ['eventsource'], section: 'HTTP/HTTPS proxy' },
  { query: '"request headers"', documents: ['eventsource'], section: 'Setting HTTP request headers' },
  // encodeurl
  { query: 'encodeUrl', documents: ['encodeurl'], section: 'encodeUrl(url)' },
  {
    query: 'user-controlled data',
    documents: ['encodeurl'],
    section: 'Encode a URL containing user-controlled data',
  },
  // function-bind
  { query: 'v1.1.2', documents: ['functionBind'], section: 'v1.1.2 - 2023-10-12' },
]
