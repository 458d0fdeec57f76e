// A throwaway PostgreSQL for the replica spec: $WFD_PGTEMP_BIN
// (internal/pgtest/cmd/pgtemp, which console/test.sh builds) starts a
// cluster with package pgtest, prints a database URL and stops the
// cluster when its stdin closes. Without PostgreSQL's server binaries it
// exits with status 3: then the spec skips, unless WFD_PGTEST_REQUIRE is
// set (CI), when it fails.
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";

export interface Postgres {
  /** The URL of an empty database. */
  url: string;
  stop(): Promise<void>;
}

/** Why there is no PostgreSQL to test with, when that is a skip and not a failure. */
export class NoPostgres extends Error {}

const exitNoBinaries = 3;

export async function startPostgres(): Promise<Postgres> {
  const bin = process.env.WFD_PGTEMP_BIN;
  if (!bin) {
    throw new Error("WFD_PGTEMP_BIN must name a built pgtemp (internal/pgtest/cmd/pgtemp; console/test.sh builds one)");
  }
  const proc: ChildProcess = spawn(bin, [], { stdio: ["pipe", "pipe", "pipe"] });
  const stderr: string[] = [];
  createInterface({ input: proc.stderr! }).on("line", (line) => stderr.push(line));
  const exited = new Promise<number | null>((resolve) => proc.once("exit", (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    // initdb and the first start are slow on a busy machine.
    const timer = setTimeout(() => reject(new Error("pgtemp printed no URL within 120 s:\n" + stderr.join("\n"))), 120_000);
    createInterface({ input: proc.stdout! }).once("line", (line) => {
      clearTimeout(timer);
      resolve(line.trim());
    });
    void exited.then((code) => {
      clearTimeout(timer);
      const why = stderr.join("\n");
      if (code === exitNoBinaries && !process.env.WFD_PGTEST_REQUIRE) {
        reject(new NoPostgres(`no PostgreSQL to run replicas on (WFD_PGTEST_REQUIRE is not set, so skipping): ${why}`));
      } else {
        reject(new Error(`pgtemp exited with ${code}:\n${why}`));
      }
    });
  });
  return {
    url,
    async stop() {
      // Closing its stdin stops the cluster and removes its directory.
      proc.stdin!.end();
      const code = await exited;
      if (code !== 0) {
        throw new Error(`pgtemp exited with ${code}:\n${stderr.join("\n")}`);
      }
    },
  };
}
