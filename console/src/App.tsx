import { useEffect, useRef } from "react";

import { Events } from "./pages/Events";
import { HandlerPage } from "./pages/HandlerPage";
import { Handlers } from "./pages/Handlers";
import { Inbox } from "./pages/Inbox";
import { Overview } from "./pages/Overview";
import { SchedulePage, Schedules } from "./pages/Schedules";
import { SignIn } from "./pages/SignIn";
import { TaskPage } from "./pages/TaskPage";
import { WorkflowPage, Workflows } from "./pages/Workflows";
import { Link, navigate, useLocation } from "./router";
import { useSession } from "./session";

const nav: [string, string][] = [
  ["/", "Overview"],
  ["/inbox", "Inbox"],
  ["/handlers", "Handlers"],
  ["/workflows", "Workflows"],
  ["/schedules", "Schedules"],
  ["/events", "Events"],
];

function page(path: string) {
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  switch (parts[0] ?? "") {
    case "":
      return <Overview />;
    case "inbox":
      return <Inbox />;
    case "tasks":
      return parts[1] ? <TaskPage key={parts[1]} id={parts[1]} /> : <Inbox />;
    case "handlers":
      return parts[1] ? <HandlerPage key={parts[1]} id={parts[1]} /> : <Handlers />;
    case "workflows":
      return parts[1] ? <WorkflowPage key={parts[1]} name={parts[1]} /> : <Workflows />;
    case "schedules":
      return parts[1] ? <SchedulePage key={parts[1]} id={parts[1]} /> : <Schedules />;
    case "events":
      return <Events />;
    case "signin":
      return <SignIn />;
    default:
      return (
        <section>
          <h1>Not found</h1>
          <p>
            No page here. <Link to="/">Go to the overview</Link>.
          </p>
        </section>
      );
  }
}

function Who() {
  const { identity } = useSession();
  let text = "…";
  if (identity.known) {
    text = !identity.authentication ? "no authentication" : identity.subject ? identity.subject : "not signed in";
  } else if (identity.note) {
    text = "sign in";
  }
  return (
    <Link to="/signin" className="who" data-testid="who" title={identity.note || undefined}>
      {text}
    </Link>
  );
}

/**
 * Switches the namespace every page shows, when the caller may use more
 * than one. A page of the old namespace (a handler, a task) means nothing
 * in the new one: switching goes to the same list, or the overview.
 */
function NamespaceSwitch({ path }: { path: string }) {
  const { namespace, namespaces, setNamespace } = useSession();
  if (namespaces.length < 2 && namespace === "default") {
    return null;
  }
  const choices = namespaces.includes(namespace) ? namespaces : [namespace, ...namespaces];
  return (
    <label className="namespace">
      Namespace{" "}
      <select
        data-testid="namespace"
        value={namespace}
        onChange={(e) => {
          setNamespace(e.target.value);
          const section = path.split("/")[1] ?? "";
          navigate(["handlers", "workflows", "schedules", "events", "inbox"].includes(section) ? "/" + section : "/");
        }}
      >
        {choices.map((ns) => (
          <option key={ns} value={ns}>
            {ns}
          </option>
        ))}
      </select>
    </label>
  );
}

/** Asks to sign in when the server wants a token this tab lacks. */
function SignInHint({ path }: { path: string }) {
  const { identity } = useSession();
  if (!identity.known || !identity.authentication || identity.subject || path === "/signin") {
    return null;
  }
  return (
    <p className="notice" role="status">
      This server wants a token: <Link to="/signin">sign in</Link>.
    </p>
  );
}

export function App() {
  const { path } = useLocation();
  // After moving to another page, keyboard and screen reader users start
  // at its content (not at the link they followed).
  const first = useRef(true);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    document.getElementById("main")?.focus({ preventScroll: true });
    window.scrollTo(0, 0);
  }, [path]);
  const section = "/" + (path.split("/")[1] ?? "");
  const active = (to: string) => to === section || (to === "/inbox" && section === "/tasks");
  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="top">
        <span className="brand">wfd</span>
        <nav aria-label="Pages">
          <ul>
            {nav.map(([to, label]) => (
              <li key={to}>
                <Link to={to} aria-current={active(to) ? "page" : undefined}>
                  {label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <NamespaceSwitch path={path} />
        <Who />
      </header>
      <main id="main" tabIndex={-1}>
        <SignInHint path={path} />
        {page(path)}
      </main>
    </>
  );
}
