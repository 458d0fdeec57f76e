// A form generated from a JSON Schema (react-jsonschema-form, validated in
// the browser with ajv), which shows the server's field errors next to
// the fields when the server refuses what the browser let through.
import Form from "@rjsf/core";
import type { ErrorSchema, RJSFSchema, UiSchema } from "@rjsf/utils";
import validator from "@rjsf/validator-ajv8";
import { useState } from "react";

import { Code, ConnectError } from "@wfd/client/web";

import { errorText } from "../api";
import { errorSchema, fieldErrors } from "../fielderrors";

type Json = { [k: string]: unknown };

export interface SchemaFormProps {
  /** The JSON Schema; without one (or with no properties) the form takes JSON text. */
  schema: Json | undefined;
  /** Prefix of the fields' ids (unique on the page). */
  id: string;
  submitLabel: string;
  /** Sends the data; a ConnectError of InvalidArgument naming fields is shown on them. */
  onSubmit(data: Json): Promise<void>;
  initial?: Json;
}

/** Whether a schema describes an object's fields (else the form is JSON text). */
function hasFields(schema: Json | undefined): schema is Json {
  return !!schema && typeof schema.properties === "object" && schema.properties !== null && Object.keys(schema.properties).length > 0;
}

/** Booleans as yes/no radio buttons: "no" is an answer, an unticked box is not. */
function uiFor(schema: Json): UiSchema {
  const ui: UiSchema = { "ui:submitButtonOptions": { norender: true } };
  const props = schema.properties as { [k: string]: { type?: unknown } };
  for (const [k, p] of Object.entries(props)) {
    if (p && p.type === "boolean") {
      ui[k] = { "ui:widget": "radio" };
    }
  }
  return ui;
}

export function SchemaForm({ schema, id, submitLabel, onSubmit, initial }: SchemaFormProps) {
  const [data, setData] = useState<Json>(initial ?? {});
  const [text, setText] = useState(() => JSON.stringify(initial ?? {}, null, 2));
  const [serverErrors, setServerErrors] = useState<ErrorSchema | undefined>(undefined);
  const [message, setMessage] = useState("");
  const [busy, setBusy] = useState(false);

  const send = async (d: Json) => {
    setBusy(true);
    setMessage("");
    setServerErrors(undefined);
    try {
      await onSubmit(d);
    } catch (err) {
      const fields = err instanceof ConnectError && err.code === Code.InvalidArgument ? fieldErrors(err.rawMessage) : new Map();
      if (fields.size > 0) {
        setServerErrors(errorSchema(fields));
        setMessage(`The server refused these values: ${(err as ConnectError).rawMessage}`);
      } else {
        setMessage(errorText(err));
      }
    } finally {
      setBusy(false);
    }
  };

  const status = message ? (
    <p className="form-error" role="alert" data-testid={`${id}-error`}>
      {message}
    </p>
  ) : null;

  if (!hasFields(schema)) {
    const description = (schema as Json | undefined)?.description;
    const submitText = (e: React.FormEvent) => {
      e.preventDefault();
      let v: unknown;
      try {
        v = JSON.parse(text || "{}");
      } catch (err) {
        setMessage("Not JSON: " + (err as Error).message);
        return;
      }
      if (typeof v !== "object" || v === null || Array.isArray(v)) {
        setMessage("Enter a JSON object, like {}");
        return;
      }
      void send(v as Json);
    };
    return (
      <form onSubmit={submitText} className="json-form" aria-busy={busy}>
        {typeof description === "string" && <p className="hint">{description}</p>}
        <label htmlFor={`${id}-json`}>Data (a JSON object)</label>
        <textarea id={`${id}-json`} rows={5} value={text} onChange={(e) => setText(e.target.value)} spellCheck={false} />
        {status}
        <button type="submit" disabled={busy}>
          {submitLabel}
        </button>
      </form>
    );
  }

  return (
    <div className="schema-form" aria-busy={busy}>
      <Form
        schema={schema as RJSFSchema}
        uiSchema={uiFor(schema)}
        validator={validator}
        idPrefix={id}
        formData={data}
        noHtml5Validate
        // A required boolean starts unanswered (rjsf would fill in false,
        // and one careless Submit would reject the request), and a const
        // in the schema (the answer schema's "if approved is false, then a
        // reason") is a condition, not a value to fill in.
        experimental_defaultFormStateBehavior={{ requiredBooleanDefault: "skip", constAsDefaults: "never" }}
        showErrorList={false}
        focusOnFirstError
        extraErrors={serverErrors}
        onChange={(e) => {
          setData((e.formData ?? {}) as Json);
          if (serverErrors) {
            setServerErrors(undefined);
          }
        }}
        onSubmit={(e) => void send((e.formData ?? {}) as Json)}
        // The errors are shown at their fields (rjsf would also log them).
        onError={() => undefined}
        transformErrors={(errors) =>
          errors
            // "must match "then" schema" repeats what the field's own error says.
            .filter((e) => e.name !== "if")
            .map((e) => (e.name === "required" ? { ...e, message: "is required" } : e))
        }
      >
        {status}
        <button type="submit" disabled={busy}>
          {submitLabel}
        </button>
      </Form>
    </div>
  );
}
