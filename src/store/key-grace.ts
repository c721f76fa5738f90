/**
 * How long a replaced key keeps working by default (`--key-grace`): an hour, long enough for the
 * clients using it to be given the new key and redeployed or restarted, since no client switches
 * keys by itself (the Flipswitch SDKs only warn on `api-key-rotated`). A leaked key is revoked at
 * once with `keys rotate --revoke-now`. A module of its own: the CLI shows it in `serve --help`
 * without loading keys.ts (and write-file-atomic) for every command.
 */
export const DEFAULT_KEY_GRACE_SECONDS = 3600;
