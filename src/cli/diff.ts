/** `flagserve diff`: see src/review/. */
import { Command } from "commander";
export const diffCommand = (): Command => new Command("diff").description("compare two configurations (not yet available)");
