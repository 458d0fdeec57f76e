// Structured data (a task's input) as a person reads it: an object as a
// table of its fields, a list of objects as a table with a column per
// field, other lists inline; labels from the schema's titles when it has
// them.
type Json = { [k: string]: unknown };

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The schema of property k of an object schema, if any. */
function propSchema(schema: Json | undefined, k: string): Json | undefined {
  const props = schema?.properties;
  return isObject(props) && isObject(props[k]) ? props[k] : undefined;
}

function label(schema: Json | undefined, k: string): string {
  const title = propSchema(schema, k)?.title;
  return typeof title === "string" && title ? title : k;
}

function scalar(v: unknown): string {
  if (v === null || v === undefined) return "–";
  if (typeof v === "boolean") return v ? "yes" : "no";
  return String(v);
}

export function DataView({ value, schema, caption }: { value: unknown; schema?: Json; caption?: string }) {
  if (isObject(value)) {
    const keys = Object.keys(value);
    if (keys.length === 0) return <span className="sub">empty</span>;
    return (
      <table className="data">
        {caption && <caption>{caption}</caption>}
        <tbody>
          {keys.map((k) => (
            <tr key={k}>
              <th scope="row">{label(schema, k)}</th>
              <td>
                <DataView value={value[k]} schema={propSchema(schema, k)} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    );
  }
  if (Array.isArray(value)) {
    if (value.length > 0 && value.every(isObject)) {
      const items = isObject(schema?.items) ? schema.items : undefined;
      const cols = [...new Set(value.flatMap((o) => Object.keys(o as Json)))];
      return (
        <table className="data grid">
          <thead>
            <tr>
              {cols.map((c) => (
                <th key={c} scope="col">
                  {label(items, c)}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {value.map((o, i) => (
              <tr key={i}>
                {cols.map((c) => (
                  <td key={c}>
                    <DataView value={(o as Json)[c]} schema={propSchema(items, c)} />
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      );
    }
    return <span>{value.map(scalar).join(", ") || "–"}</span>;
  }
  return <span>{scalar(value)}</span>;
}
