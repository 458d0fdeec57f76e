// The schema forms (react-jsonschema-form and ajv, most of the bundle's
// weight) load with the first page that shows one, not with the console.
import { lazy, Suspense } from "react";

import type { SchemaFormProps } from "./SchemaForm";

const Form = lazy(async () => ({ default: (await import("./SchemaForm")).SchemaForm }));

export function SchemaForm(props: SchemaFormProps) {
  return (
    <Suspense fallback={<p className="hint">Loading the form…</p>}>
      <Form {...props} />
    </Suspense>
  );
}
