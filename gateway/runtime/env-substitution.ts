const ENV_REFERENCE = /\$?\$\{([A-Za-z0-9_]+)(:-(.*?))?\}/g;

/**
 * express-gateway's `${VAR}` substitution (lib/config/config.js `envReplace`, not exported), reimplemented
 * to behave the same: `${VAR}` is the variable's value, even empty; `${VAR:-default}` falls back to
 * the default only when the variable is unset (a set but empty variable stays empty, unlike the
 * shell; an empty default counts as none); `$${VAR}` is left as written; an unset variable without
 * default becomes the text `null`.
 *
 * @example envReplace('package: ${DIST:-/opt}/p.js', {}) // => 'package: /opt/p.js'
 */
export function envReplace(text: string, env: NodeJS.ProcessEnv, onUnknown?: (name: string) => void): string {
  return text.replace(ENV_REFERENCE, (match: string, name: string, _withDefault: string | undefined, defaultValue: string | undefined) => {
    if (match.startsWith('$$')) return match;
    if (Object.prototype.hasOwnProperty.call(env, name)) return String(env[name]);
    if (defaultValue) return defaultValue;
    onUnknown?.(name);
    return 'null';
  });
}
