const htmlText = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * The in-cluster UI's sign-in form: a Kubernetes bearer token, posted to this server, which checks
 * it with a TokenReview. No script: the page-wide CSP allows none inline, and none is needed.
 */
export function loginPage(error?: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in · Mooring</title>
<link rel="stylesheet" href="/style.css">
</head>
<body>
<main class="login">
<h1>Mooring</h1>
<form method="post" action="/login">
<label for="token">Kubernetes token</label>
<textarea id="token" name="token" rows="6" required autocomplete="off" spellcheck="false"
  aria-describedby="token-help"></textarea>
<p id="token-help">For example from <code>kubectl create token &lt;service-account&gt;</code> or your
identity provider. The UI checks it with a TokenReview, keeps only who you are, and acts as you, so
your RBAC decides what you may do.</p>
${error ? `<p role="alert" class="error">${htmlText(error)}</p>` : ''}
<button type="submit">Sign in</button>
</form>
</main>
</body>
</html>
`;
}
