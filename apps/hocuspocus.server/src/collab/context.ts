import type { Principal } from '../auth/tokens.ts'

/** What a WebSocket connection carries once authenticated. */
export type ConnectionContext = { principal: Principal; documentId: string; canWrite: boolean }
