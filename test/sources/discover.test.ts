import { describe, expect, it } from "vitest";
import { discover } from "../../src/sources/discover.js";
import { useTempDir } from "../config/helpers.js";

describe("discover", () => {
  const tmp = useTempDir();

  it("lists file and subdirectory environments with their files, sorted", async () => {
    await tmp.write("prod.yaml", "");
    await tmp.write("b/z.json", "");
    await tmp.write("b/a.yml", "");
    await tmp.write("b/nested/ignored.yaml", "");
    await tmp.write("b/notes.md", "");
    await tmp.write("UPPER.YAML", "");

    const found = await discover(tmp.path);

    expect(found.file).toBeUndefined();
    expect(found.problems).toEqual([]);
    expect(found.environments).toEqual([
      { name: "UPPER", files: [`${tmp.path}/UPPER.YAML`] },
      { name: "b", files: [`${tmp.path}/b/a.yml`, `${tmp.path}/b/z.json`], dir: `${tmp.path}/b` },
      { name: "prod", files: [`${tmp.path}/prod.yaml`] },
    ]);
  });

  it("test files (<env>.test.yaml) are never environments, in PATH or in a subdirectory", async () => {
    await tmp.write("development.yaml", "");
    await tmp.write("development.test.yaml", "");
    await tmp.write("staging.test.yml", "");
    await tmp.write("b/a.yaml", "");
    await tmp.write("b/b.test.yaml", "");
    const found = await discover(tmp.path);
    expect(found.problems).toEqual([]);
    expect(found.environments).toEqual([
      { name: "b", files: [`${tmp.path}/b/a.yaml`], dir: `${tmp.path}/b` },
      { name: "development", files: [`${tmp.path}/development.yaml`] },
    ]);
  });

  it("a file PATH is left to the loader (its content decides)", async () => {
    const file = await tmp.write("all.yaml", "");
    expect(await discover(file)).toMatchObject({ root: file, file, environments: [] });
  });

  it("resolves a relative PATH", async () => {
    const cwd = process.cwd();
    process.chdir(tmp.path);
    try {
      await tmp.write("flags/dev.yaml", "");
      expect((await discover("flags")).environments[0]?.files).toEqual([`${tmp.path}/flags/dev.yaml`]);
    } finally {
      process.chdir(cwd);
    }
  });

  it("follows a symlinked subdirectory", async () => {
    await tmp.write("real/dev/flags.yaml", "");
    await tmp.link("flags/dev", "../real/dev");
    expect((await discover(`${tmp.path}/flags`)).environments).toEqual([
      { name: "dev", files: [`${tmp.path}/flags/dev/flags.yaml`], dir: `${tmp.path}/flags/dev` },
    ]);
  });
});
