/** What a given admin token must be. A module of its own: the CLI checks `--admin-token` while parsing, without loading the state directory's code. */

/** A given token shorter than this is refused: it could be guessed. */
export const MIN_ADMIN_TOKEN_LENGTH = 16;

/** Why `token` cannot be an admin token, or undefined when it can. */
export function adminTokenProblem(token: string): string | undefined {
  if (token.length < MIN_ADMIN_TOKEN_LENGTH)
    return `an admin token must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters long (this one has ${token.length})`;
  // It is sent as `Authorization: Bearer TOKEN`, which carries one word of visible ASCII.
  if (!/^[\x21-\x7e]+$/.test(token)) return "an admin token is sent in an HTTP header: visible ASCII characters only, no spaces";
  return undefined;
}

/** Why a given token (`--admin-token`, FLAGSERVE_ADMIN_TOKEN, the API's `adminToken`) cannot be used, and what to do instead. */
export function givenAdminTokenProblem(token: string): string | undefined {
  const problem = adminTokenProblem(token);
  return problem && `${problem}; leave it out and one is generated`;
}
