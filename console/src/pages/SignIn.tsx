import { useState } from "react";

import { useSession } from "../session";

export function SignIn() {
  const { token, tokenError, identity, setToken } = useSession();
  const [value, setValue] = useState("");
  return (
    <section aria-labelledby="signin-h" className="narrow-page">
      <h1 id="signin-h">Sign in</h1>
      <p>
        wfd authenticates each call with a bearer token (<code>--auth-tokens</code> or a JWT). The console keeps it in this tab only
        (sessionStorage) and sends it to this server.
      </p>
      <p role="status" data-testid="identity">
        {identity.known
          ? identity.authentication
            ? identity.subject
              ? `You are ${identity.subject} (roles: ${identity.roles.join(", ") || "none"}).`
              : `Not signed in${identity.note ? ` (${identity.note})` : ""}.`
            : "Authentication is off on this server: no sign-in needed."
          : identity.note || "Asking the server who you are…"}
      </p>
      {tokenError && (
        <p className="error" role="alert">
          The token is not sent: {tokenError}
        </p>
      )}
      <form
        className="stack"
        onSubmit={(e) => {
          e.preventDefault();
          setToken(value.trim());
          setValue("");
        }}
      >
        <label className="field">
          Token
          <input type="password" autoComplete="off" value={value} onChange={(e) => setValue(e.target.value)} required />
        </label>
        <button type="submit">Sign in</button>
      </form>
      {token && (
        <p>
          <button type="button" onClick={() => setToken("")}>
            Sign out
          </button>
        </p>
      )}
    </section>
  );
}
