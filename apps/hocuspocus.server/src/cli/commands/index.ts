/**
 * Every CLI command, by its two words (`user add`), in the order `--help` lists them. A new command goes
 * into its group's file; a new group is a file here and a line below.
 */
import { appCommands } from './apps.ts'
import type { Command } from './command.ts'
import { dbCommands } from './db.ts'
import { documentCommands } from './documents.ts'
import { tokenCommands } from './tokens.ts'
import { userCommands } from './users.ts'

export const commands: Record<string, Command> = {
  ...userCommands,
  ...appCommands,
  ...tokenCommands,
  ...documentCommands,
  ...dbCommands,
}
