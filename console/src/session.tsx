// The signed-in session: the client (with the tab's bearer token) and who
// the server says the caller is (GetIdentity).
import { createContext, useContext, useEffect, useMemo, useState, type ReactNode } from "react";

import { Code, type WfdClient } from "@wfd/client/web";

import { codeOf, errorText, isUnimplemented, newClient, storedNamespace, storedToken, storeNamespace, storeToken } from "./api";

export interface Identity {
  /** Known once GetIdentity answered; false while loading or when the server lacks it. */
  known: boolean;
  authentication: boolean;
  subject: string;
  roles: string[];
  /** Why it is not known (an error, or a server without GetIdentity). */
  note: string;
}

interface Session {
  client: WfdClient;
  token: string;
  /** The namespace every page shows, and those the caller may switch to. */
  namespace: string;
  namespaces: string[];
  setNamespace(ns: string): void;
  /** Why the token is not used (plaintext to a remote server). */
  tokenError: string;
  identity: Identity;
  setToken(token: string): void;
}

const SessionContext = createContext<Session | null>(null);

const unknown: Identity = { known: false, authentication: false, subject: "", roles: [], note: "" };

export function SessionProvider({ children }: { children: ReactNode }) {
  const [token, setTokenState] = useState(storedToken);
  const [namespace, setNamespaceState] = useState(() => {
    const ns = storedNamespace();
    try {
      newClient("", ns);
      return ns;
    } catch {
      return "default"; // a ?ns= that cannot be a namespace
    }
  });
  // The client refuses to send a token in plaintext beyond this machine
  // (assertTokenTransport): then the tab stays signed out, saying why.
  const [client, tokenError] = useMemo((): [WfdClient, string] => {
    try {
      return [newClient(token, namespace), ""];
    } catch (err) {
      return [newClient("", namespace), errorText(err)];
    }
  }, [token, namespace]);
  const [namespaces, setNamespaces] = useState<string[]>([]);
  useEffect(() => {
    let live = true;
    client
      .namespaces({ timeoutMs: 10_000 })
      .then((ns) => {
        if (live) {
          setNamespaces(ns.map((n) => n.name));
        }
      })
      .catch(() => {
        // An older server, or signed out: no switcher.
        if (live) {
          setNamespaces([]);
        }
      });
    return () => {
      live = false;
    };
  }, [client]);
  const [identity, setIdentity] = useState<Identity>(unknown);
  useEffect(() => {
    let live = true;
    setIdentity(unknown);
    client
      .identity({ timeoutMs: 10_000 })
      .then((res) => {
        if (live) {
          setIdentity({ known: true, authentication: res.authentication, subject: res.subject, roles: [...res.roles], note: "" });
        }
      })
      .catch((err: unknown) => {
        if (live && codeOf(err) === Code.Unauthenticated) {
          // Authentication is on and this tab has no (valid) token.
          setIdentity({ known: true, authentication: true, subject: "", roles: [], note: errorText(err) });
        } else if (live) {
          const note = isUnimplemented(err) ? "this server does not say who you are (GetIdentity is not implemented)" : errorText(err);
          setIdentity({ ...unknown, note });
        }
      });
    return () => {
      live = false;
    };
  }, [client]);
  const value = useMemo<Session>(
    () => ({
      client,
      token,
      tokenError,
      identity,
      namespace,
      namespaces,
      setNamespace(ns: string) {
        storeNamespace(ns);
        setNamespaceState(ns);
      },
      setToken(t: string) {
        storeToken(t);
        setTokenState(t);
      },
    }),
    [client, token, tokenError, identity, namespace, namespaces],
  );
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSession(): Session {
  const s = useContext(SessionContext);
  if (!s) {
    throw new Error("useSession outside SessionProvider");
  }
  return s;
}
