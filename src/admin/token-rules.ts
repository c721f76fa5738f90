/** What a given admin token must be. A module of its own: the CLI checks `--admin-token` while parsing, without loading the state directory's code. */

/** A given token shorter than this is refused: it could be guessed. */
export const MIN_ADMIN_TOKEN_LENGTH = 16;

/** Why `token` cannot be an admin token, or undefined when it can. */
export const adminTokenProblem = (token: string): string | undefined =>
  token.length < MIN_ADMIN_TOKEN_LENGTH
    ? `an admin token must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters long (this one has ${token.length}); leave it out and one is generated`
    : undefined;
