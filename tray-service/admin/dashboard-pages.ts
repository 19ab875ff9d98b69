/** The queue dashboard's own two pages: signing in and signing out. No script: plain forms. */

const page = (title: string, body: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:16px system-ui,sans-serif;max-width:28rem;margin:4rem auto;padding:0 1rem}
input,button{font:inherit;padding:.4rem}input{width:100%;box-sizing:border-box}.error{color:#b00}</style>
</head><body><h1>${title}</h1>${body}</body></html>`;

/** The sign-in form: the credential goes in a POST body, never in a URL (logs, history, Referer). */
export function signInPage(basePath: string, error?: string): string {
  return page(
    'Queue dashboard: sign in',
    `${error ? `<p class="error">${error}</p>` : ''}
<form method="post" action="${basePath}/login">
<p><label for="token">Admin token (ADMIN_TOKEN) or admin JWT</label></p>
<p><input id="token" name="token" type="password" autocomplete="off" required autofocus></p>
<p><button type="submit">Sign in</button></p>
</form>`,
  );
}

/** Signing out is a POST (a link cannot end a session by being prefetched); this page offers it. */
export function signOutPage(basePath: string): string {
  return page(
    'Queue dashboard: sign out',
    `<form method="post" action="${basePath}/logout"><p><button type="submit">Sign out</button></p></form>
<p><a href="${basePath}">Back to the dashboard</a></p>`,
  );
}
