/** Where the admin API lives: a module of its own, so the commands that call it know its paths without loading the server's side. */
export const ADMIN_API_PREFIX = "/api/v1/admin";

/** `GET PROOF_PATH?nonce=N`: `{"proof"}` (proof.ts); answered without the token (it is what the token proves). */
export const PROOF_PATH = `${ADMIN_API_PREFIX}/proof`;
