/*
 * GENERATED: do not edit. The validators of schema/flagserve-test.schema.json (ajv's standalone code),
 * written by scripts/schema-validators.ts. After a change to the schema, run:
 *
 *   npm run generate:validators
 *
 * test/testing/test-flags.test.ts fails when this file is not what that writes.
 */
// @ts-nocheck
import { createRequire } from "node:module";
const require = createRequire(import.meta.url);
const testFile = validate0;
const schema0 = { "$schema": "http://json-schema.org/draft-07/schema#", "title": "flagserve test file", "description": "Test cases for the flags of one environment (`flagserve test`): each case evaluates a flag, some flags or all of them for a context, or for each row of a table of contexts, and says what the answer must be. Named `<environment>.test.yaml` beside the environment's flag file, it is found by `flagserve test` and never read as an environment.", "type": "object", "additionalProperties": false, "required": ["tests"], "properties": { "$schema": { "description": "The JSON Schema of this file, for editors.", "type": "string" }, "environment": { "title": "Environment", "description": "The environment whose flags are tested. Optional when the file is named `<environment>.test.yaml`.", "type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9._-]*$", "patternErrorMessage": "environment names use letters, digits, '.', '_' and '-', and start with a letter or digit" }, "tests": { "title": "Test cases", "type": "array", "items": { "$ref": "#/definitions/case" } } }, "definitions": { "case": { "title": "Test case", "type": "object", "additionalProperties": false, "required": ["name", "expect"], "properties": { "name": { "description": "What the case checks, in words: shown in reports.", "type": "string", "minLength": 1 }, "flag": { "description": "The flag evaluated.", "type": "string", "minLength": 1 }, "flags": { "description": 'Several flags, each expected to answer the same; or "*" for every flag of the environment.', "oneOf": [{ "type": "array", "minItems": 1, "items": { "type": "string", "minLength": 1 } }, { "const": "*" }] }, "context": { "description": "The evaluation context, as an OFREP request sends it (`targetingKey` and any attributes). With `contexts`, the part every row shares.", "type": "object" }, "contexts": { "description": "A table: the same expectation for each of these contexts (each merged over `context`).", "type": "array", "minItems": 1, "items": { "type": "object" } }, "now": { "description": "The evaluation time (`$flagd.timestamp`), as an ISO 8601 date-time or Unix seconds; default: when the test runs.", "type": ["string", "number"] }, "expect": { "$ref": "#/definitions/expectation" } }, "oneOf": [{ "required": ["flag"], "not": { "required": ["flags"] } }, { "required": ["flags"], "not": { "required": ["flag"] } }] }, "expectation": { "title": "Expected answer", "description": "Any of variant, value, reason and errorCode; each one given must match.", "type": "object", "additionalProperties": false, "minProperties": 1, "properties": { "variant": { "description": "The variant name.", "type": "string" }, "value": { "description": "The value (compared as JSON)." }, "reason": { "description": "The OFREP reason.", "enum": ["STATIC", "TARGETING_MATCH", "SPLIT", "DEFAULT", "DISABLED"] }, "errorCode": { "description": "The OFREP error code; null: the evaluation must not fail.", "enum": ["TARGETING_KEY_MISSING", "PARSE_ERROR", "GENERAL", "INVALID_CONTEXT", "FLAG_NOT_FOUND", null] } } } } };
const pattern0 = new RegExp("^[A-Za-z0-9][A-Za-z0-9._-]*$", "u");
const schema1 = { "title": "Test case", "type": "object", "additionalProperties": false, "required": ["name", "expect"], "properties": { "name": { "description": "What the case checks, in words: shown in reports.", "type": "string", "minLength": 1 }, "flag": { "description": "The flag evaluated.", "type": "string", "minLength": 1 }, "flags": { "description": 'Several flags, each expected to answer the same; or "*" for every flag of the environment.', "oneOf": [{ "type": "array", "minItems": 1, "items": { "type": "string", "minLength": 1 } }, { "const": "*" }] }, "context": { "description": "The evaluation context, as an OFREP request sends it (`targetingKey` and any attributes). With `contexts`, the part every row shares.", "type": "object" }, "contexts": { "description": "A table: the same expectation for each of these contexts (each merged over `context`).", "type": "array", "minItems": 1, "items": { "type": "object" } }, "now": { "description": "The evaluation time (`$flagd.timestamp`), as an ISO 8601 date-time or Unix seconds; default: when the test runs.", "type": ["string", "number"] }, "expect": { "$ref": "#/definitions/expectation" } }, "oneOf": [{ "required": ["flag"], "not": { "required": ["flags"] } }, { "required": ["flags"], "not": { "required": ["flag"] } }] };
const schema2 = { "title": "Expected answer", "description": "Any of variant, value, reason and errorCode; each one given must match.", "type": "object", "additionalProperties": false, "minProperties": 1, "properties": { "variant": { "description": "The variant name.", "type": "string" }, "value": { "description": "The value (compared as JSON)." }, "reason": { "description": "The OFREP reason.", "enum": ["STATIC", "TARGETING_MATCH", "SPLIT", "DEFAULT", "DISABLED"] }, "errorCode": { "description": "The OFREP error code; null: the evaluation must not fail.", "enum": ["TARGETING_KEY_MISSING", "PARSE_ERROR", "GENERAL", "INVALID_CONTEXT", "FLAG_NOT_FOUND", null] } } };
const func0 = require("ajv/dist/runtime/ucs2length").default;
function validate1(data, { instancePath = "", parentData, parentDataProperty, rootData = data } = {}) {
  let vErrors = null;
  let errors = 0;
  const _errs1 = errors;
  let valid0 = false;
  let passing0 = null;
  const _errs2 = errors;
  const _errs3 = errors;
  const _errs4 = errors;
  if (data && typeof data == "object" && !Array.isArray(data)) {
    let missing0;
    if (data.flags === void 0 && (missing0 = "flags")) {
      const err0 = {};
      if (vErrors === null) {
        vErrors = [err0];
      } else {
        vErrors.push(err0);
      }
      errors++;
    }
  }
  var valid1 = _errs4 === errors;
  if (valid1) {
    const err1 = { instancePath, schemaPath: "#/oneOf/0/not", keyword: "not", params: {}, message: "must NOT be valid", schema: schema1.oneOf[0].not, parentSchema: schema1.oneOf[0], data };
    if (vErrors === null) {
      vErrors = [err1];
    } else {
      vErrors.push(err1);
    }
    errors++;
  } else {
    errors = _errs3;
    if (vErrors !== null) {
      if (_errs3) {
        vErrors.length = _errs3;
      } else {
        vErrors = null;
      }
    }
  }
  if (data && typeof data == "object" && !Array.isArray(data)) {
    if (data.flag === void 0) {
      const err2 = { instancePath, schemaPath: "#/oneOf/0/required", keyword: "required", params: { missingProperty: "flag" }, message: "must have required property 'flag'", schema: schema1.oneOf[0].required, parentSchema: schema1.oneOf[0], data };
      if (vErrors === null) {
        vErrors = [err2];
      } else {
        vErrors.push(err2);
      }
      errors++;
    }
  }
  var _valid0 = _errs2 === errors;
  if (_valid0) {
    valid0 = true;
    passing0 = 0;
  }
  const _errs5 = errors;
  const _errs6 = errors;
  const _errs7 = errors;
  if (data && typeof data == "object" && !Array.isArray(data)) {
    let missing1;
    if (data.flag === void 0 && (missing1 = "flag")) {
      const err3 = {};
      if (vErrors === null) {
        vErrors = [err3];
      } else {
        vErrors.push(err3);
      }
      errors++;
    }
  }
  var valid2 = _errs7 === errors;
  if (valid2) {
    const err4 = { instancePath, schemaPath: "#/oneOf/1/not", keyword: "not", params: {}, message: "must NOT be valid", schema: schema1.oneOf[1].not, parentSchema: schema1.oneOf[1], data };
    if (vErrors === null) {
      vErrors = [err4];
    } else {
      vErrors.push(err4);
    }
    errors++;
  } else {
    errors = _errs6;
    if (vErrors !== null) {
      if (_errs6) {
        vErrors.length = _errs6;
      } else {
        vErrors = null;
      }
    }
  }
  if (data && typeof data == "object" && !Array.isArray(data)) {
    if (data.flags === void 0) {
      const err5 = { instancePath, schemaPath: "#/oneOf/1/required", keyword: "required", params: { missingProperty: "flags" }, message: "must have required property 'flags'", schema: schema1.oneOf[1].required, parentSchema: schema1.oneOf[1], data };
      if (vErrors === null) {
        vErrors = [err5];
      } else {
        vErrors.push(err5);
      }
      errors++;
    }
  }
  var _valid0 = _errs5 === errors;
  if (_valid0 && valid0) {
    valid0 = false;
    passing0 = [passing0, 1];
  } else {
    if (_valid0) {
      valid0 = true;
      passing0 = 1;
    }
  }
  if (!valid0) {
    const err6 = { instancePath, schemaPath: "#/oneOf", keyword: "oneOf", params: { passingSchemas: passing0 }, message: "must match exactly one schema in oneOf", schema: schema1.oneOf, parentSchema: schema1, data };
    if (vErrors === null) {
      vErrors = [err6];
    } else {
      vErrors.push(err6);
    }
    errors++;
  } else {
    errors = _errs1;
    if (vErrors !== null) {
      if (_errs1) {
        vErrors.length = _errs1;
      } else {
        vErrors = null;
      }
    }
  }
  if (data && typeof data == "object" && !Array.isArray(data)) {
    if (data.name === void 0) {
      const err7 = { instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: "name" }, message: "must have required property 'name'", schema: schema1.required, parentSchema: schema1, data };
      if (vErrors === null) {
        vErrors = [err7];
      } else {
        vErrors.push(err7);
      }
      errors++;
    }
    if (data.expect === void 0) {
      const err8 = { instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: "expect" }, message: "must have required property 'expect'", schema: schema1.required, parentSchema: schema1, data };
      if (vErrors === null) {
        vErrors = [err8];
      } else {
        vErrors.push(err8);
      }
      errors++;
    }
    for (const key0 in data) {
      if (!(key0 === "name" || key0 === "flag" || key0 === "flags" || key0 === "context" || key0 === "contexts" || key0 === "now" || key0 === "expect")) {
        const err9 = { instancePath, schemaPath: "#/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties", schema: false, parentSchema: schema1, data };
        if (vErrors === null) {
          vErrors = [err9];
        } else {
          vErrors.push(err9);
        }
        errors++;
      }
    }
    if (data.name !== void 0) {
      let data0 = data.name;
      if (typeof data0 === "string") {
        if (func0(data0) < 1) {
          const err10 = { instancePath: instancePath + "/name", schemaPath: "#/properties/name/minLength", keyword: "minLength", params: { limit: 1 }, message: "must NOT have fewer than 1 characters", schema: 1, parentSchema: schema1.properties.name, data: data0 };
          if (vErrors === null) {
            vErrors = [err10];
          } else {
            vErrors.push(err10);
          }
          errors++;
        }
      } else {
        const err11 = { instancePath: instancePath + "/name", schemaPath: "#/properties/name/type", keyword: "type", params: { type: "string" }, message: "must be string", schema: schema1.properties.name.type, parentSchema: schema1.properties.name, data: data0 };
        if (vErrors === null) {
          vErrors = [err11];
        } else {
          vErrors.push(err11);
        }
        errors++;
      }
    }
    if (data.flag !== void 0) {
      let data1 = data.flag;
      if (typeof data1 === "string") {
        if (func0(data1) < 1) {
          const err12 = { instancePath: instancePath + "/flag", schemaPath: "#/properties/flag/minLength", keyword: "minLength", params: { limit: 1 }, message: "must NOT have fewer than 1 characters", schema: 1, parentSchema: schema1.properties.flag, data: data1 };
          if (vErrors === null) {
            vErrors = [err12];
          } else {
            vErrors.push(err12);
          }
          errors++;
        }
      } else {
        const err13 = { instancePath: instancePath + "/flag", schemaPath: "#/properties/flag/type", keyword: "type", params: { type: "string" }, message: "must be string", schema: schema1.properties.flag.type, parentSchema: schema1.properties.flag, data: data1 };
        if (vErrors === null) {
          vErrors = [err13];
        } else {
          vErrors.push(err13);
        }
        errors++;
      }
    }
    if (data.flags !== void 0) {
      let data2 = data.flags;
      const _errs14 = errors;
      let valid4 = false;
      let passing1 = null;
      const _errs15 = errors;
      if (Array.isArray(data2)) {
        if (data2.length < 1) {
          const err14 = { instancePath: instancePath + "/flags", schemaPath: "#/properties/flags/oneOf/0/minItems", keyword: "minItems", params: { limit: 1 }, message: "must NOT have fewer than 1 items", schema: 1, parentSchema: schema1.properties.flags.oneOf[0], data: data2 };
          if (vErrors === null) {
            vErrors = [err14];
          } else {
            vErrors.push(err14);
          }
          errors++;
        }
        const len0 = data2.length;
        for (let i0 = 0; i0 < len0; i0++) {
          let data3 = data2[i0];
          if (typeof data3 === "string") {
            if (func0(data3) < 1) {
              const err15 = { instancePath: instancePath + "/flags/" + i0, schemaPath: "#/properties/flags/oneOf/0/items/minLength", keyword: "minLength", params: { limit: 1 }, message: "must NOT have fewer than 1 characters", schema: 1, parentSchema: schema1.properties.flags.oneOf[0].items, data: data3 };
              if (vErrors === null) {
                vErrors = [err15];
              } else {
                vErrors.push(err15);
              }
              errors++;
            }
          } else {
            const err16 = { instancePath: instancePath + "/flags/" + i0, schemaPath: "#/properties/flags/oneOf/0/items/type", keyword: "type", params: { type: "string" }, message: "must be string", schema: schema1.properties.flags.oneOf[0].items.type, parentSchema: schema1.properties.flags.oneOf[0].items, data: data3 };
            if (vErrors === null) {
              vErrors = [err16];
            } else {
              vErrors.push(err16);
            }
            errors++;
          }
        }
      } else {
        const err17 = { instancePath: instancePath + "/flags", schemaPath: "#/properties/flags/oneOf/0/type", keyword: "type", params: { type: "array" }, message: "must be array", schema: schema1.properties.flags.oneOf[0].type, parentSchema: schema1.properties.flags.oneOf[0], data: data2 };
        if (vErrors === null) {
          vErrors = [err17];
        } else {
          vErrors.push(err17);
        }
        errors++;
      }
      var _valid1 = _errs15 === errors;
      if (_valid1) {
        valid4 = true;
        passing1 = 0;
      }
      const _errs19 = errors;
      if ("*" !== data2) {
        const err18 = { instancePath: instancePath + "/flags", schemaPath: "#/properties/flags/oneOf/1/const", keyword: "const", params: { allowedValue: "*" }, message: "must be equal to constant", schema: "*", parentSchema: schema1.properties.flags.oneOf[1], data: data2 };
        if (vErrors === null) {
          vErrors = [err18];
        } else {
          vErrors.push(err18);
        }
        errors++;
      }
      var _valid1 = _errs19 === errors;
      if (_valid1 && valid4) {
        valid4 = false;
        passing1 = [passing1, 1];
      } else {
        if (_valid1) {
          valid4 = true;
          passing1 = 1;
        }
      }
      if (!valid4) {
        const err19 = { instancePath: instancePath + "/flags", schemaPath: "#/properties/flags/oneOf", keyword: "oneOf", params: { passingSchemas: passing1 }, message: "must match exactly one schema in oneOf", schema: schema1.properties.flags.oneOf, parentSchema: schema1.properties.flags, data: data2 };
        if (vErrors === null) {
          vErrors = [err19];
        } else {
          vErrors.push(err19);
        }
        errors++;
      } else {
        errors = _errs14;
        if (vErrors !== null) {
          if (_errs14) {
            vErrors.length = _errs14;
          } else {
            vErrors = null;
          }
        }
      }
    }
    if (data.context !== void 0) {
      let data4 = data.context;
      if (!(data4 && typeof data4 == "object" && !Array.isArray(data4))) {
        const err20 = { instancePath: instancePath + "/context", schemaPath: "#/properties/context/type", keyword: "type", params: { type: "object" }, message: "must be object", schema: schema1.properties.context.type, parentSchema: schema1.properties.context, data: data4 };
        if (vErrors === null) {
          vErrors = [err20];
        } else {
          vErrors.push(err20);
        }
        errors++;
      }
    }
    if (data.contexts !== void 0) {
      let data5 = data.contexts;
      if (Array.isArray(data5)) {
        if (data5.length < 1) {
          const err21 = { instancePath: instancePath + "/contexts", schemaPath: "#/properties/contexts/minItems", keyword: "minItems", params: { limit: 1 }, message: "must NOT have fewer than 1 items", schema: 1, parentSchema: schema1.properties.contexts, data: data5 };
          if (vErrors === null) {
            vErrors = [err21];
          } else {
            vErrors.push(err21);
          }
          errors++;
        }
        const len1 = data5.length;
        for (let i1 = 0; i1 < len1; i1++) {
          let data6 = data5[i1];
          if (!(data6 && typeof data6 == "object" && !Array.isArray(data6))) {
            const err22 = { instancePath: instancePath + "/contexts/" + i1, schemaPath: "#/properties/contexts/items/type", keyword: "type", params: { type: "object" }, message: "must be object", schema: schema1.properties.contexts.items.type, parentSchema: schema1.properties.contexts.items, data: data6 };
            if (vErrors === null) {
              vErrors = [err22];
            } else {
              vErrors.push(err22);
            }
            errors++;
          }
        }
      } else {
        const err23 = { instancePath: instancePath + "/contexts", schemaPath: "#/properties/contexts/type", keyword: "type", params: { type: "array" }, message: "must be array", schema: schema1.properties.contexts.type, parentSchema: schema1.properties.contexts, data: data5 };
        if (vErrors === null) {
          vErrors = [err23];
        } else {
          vErrors.push(err23);
        }
        errors++;
      }
    }
    if (data.now !== void 0) {
      let data7 = data.now;
      if (typeof data7 !== "string" && !(typeof data7 == "number" && isFinite(data7))) {
        const err24 = { instancePath: instancePath + "/now", schemaPath: "#/properties/now/type", keyword: "type", params: { type: schema1.properties.now.type }, message: "must be string,number", schema: schema1.properties.now.type, parentSchema: schema1.properties.now, data: data7 };
        if (vErrors === null) {
          vErrors = [err24];
        } else {
          vErrors.push(err24);
        }
        errors++;
      }
    }
    if (data.expect !== void 0) {
      let data8 = data.expect;
      if (data8 && typeof data8 == "object" && !Array.isArray(data8)) {
        if (Object.keys(data8).length < 1) {
          const err25 = { instancePath: instancePath + "/expect", schemaPath: "#/definitions/expectation/minProperties", keyword: "minProperties", params: { limit: 1 }, message: "must NOT have fewer than 1 properties", schema: 1, parentSchema: schema2, data: data8 };
          if (vErrors === null) {
            vErrors = [err25];
          } else {
            vErrors.push(err25);
          }
          errors++;
        }
        for (const key1 in data8) {
          if (!(key1 === "variant" || key1 === "value" || key1 === "reason" || key1 === "errorCode")) {
            const err26 = { instancePath: instancePath + "/expect", schemaPath: "#/definitions/expectation/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key1 }, message: "must NOT have additional properties", schema: false, parentSchema: schema2, data: data8 };
            if (vErrors === null) {
              vErrors = [err26];
            } else {
              vErrors.push(err26);
            }
            errors++;
          }
        }
        if (data8.variant !== void 0) {
          let data9 = data8.variant;
          if (typeof data9 !== "string") {
            const err27 = { instancePath: instancePath + "/expect/variant", schemaPath: "#/definitions/expectation/properties/variant/type", keyword: "type", params: { type: "string" }, message: "must be string", schema: schema2.properties.variant.type, parentSchema: schema2.properties.variant, data: data9 };
            if (vErrors === null) {
              vErrors = [err27];
            } else {
              vErrors.push(err27);
            }
            errors++;
          }
        }
        if (data8.reason !== void 0) {
          let data10 = data8.reason;
          if (!(data10 === "STATIC" || data10 === "TARGETING_MATCH" || data10 === "SPLIT" || data10 === "DEFAULT" || data10 === "DISABLED")) {
            const err28 = { instancePath: instancePath + "/expect/reason", schemaPath: "#/definitions/expectation/properties/reason/enum", keyword: "enum", params: { allowedValues: schema2.properties.reason.enum }, message: "must be equal to one of the allowed values", schema: schema2.properties.reason.enum, parentSchema: schema2.properties.reason, data: data10 };
            if (vErrors === null) {
              vErrors = [err28];
            } else {
              vErrors.push(err28);
            }
            errors++;
          }
        }
        if (data8.errorCode !== void 0) {
          let data11 = data8.errorCode;
          if (!(data11 === "TARGETING_KEY_MISSING" || data11 === "PARSE_ERROR" || data11 === "GENERAL" || data11 === "INVALID_CONTEXT" || data11 === "FLAG_NOT_FOUND" || data11 === null)) {
            const err29 = { instancePath: instancePath + "/expect/errorCode", schemaPath: "#/definitions/expectation/properties/errorCode/enum", keyword: "enum", params: { allowedValues: schema2.properties.errorCode.enum }, message: "must be equal to one of the allowed values", schema: schema2.properties.errorCode.enum, parentSchema: schema2.properties.errorCode, data: data11 };
            if (vErrors === null) {
              vErrors = [err29];
            } else {
              vErrors.push(err29);
            }
            errors++;
          }
        }
      } else {
        const err30 = { instancePath: instancePath + "/expect", schemaPath: "#/definitions/expectation/type", keyword: "type", params: { type: "object" }, message: "must be object", schema: schema2.type, parentSchema: schema2, data: data8 };
        if (vErrors === null) {
          vErrors = [err30];
        } else {
          vErrors.push(err30);
        }
        errors++;
      }
    }
  } else {
    const err31 = { instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object", schema: schema1.type, parentSchema: schema1, data };
    if (vErrors === null) {
      vErrors = [err31];
    } else {
      vErrors.push(err31);
    }
    errors++;
  }
  validate1.errors = vErrors;
  return errors === 0;
}
function validate0(data, { instancePath = "", parentData, parentDataProperty, rootData = data } = {}) {
  let vErrors = null;
  let errors = 0;
  if (data && typeof data == "object" && !Array.isArray(data)) {
    if (data.tests === void 0) {
      const err0 = { instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: "tests" }, message: "must have required property 'tests'", schema: schema0.required, parentSchema: schema0, data };
      if (vErrors === null) {
        vErrors = [err0];
      } else {
        vErrors.push(err0);
      }
      errors++;
    }
    for (const key0 in data) {
      if (!(key0 === "$schema" || key0 === "environment" || key0 === "tests")) {
        const err1 = { instancePath, schemaPath: "#/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties", schema: false, parentSchema: schema0, data };
        if (vErrors === null) {
          vErrors = [err1];
        } else {
          vErrors.push(err1);
        }
        errors++;
      }
    }
    if (data.$schema !== void 0) {
      let data0 = data.$schema;
      if (typeof data0 !== "string") {
        const err2 = { instancePath: instancePath + "/$schema", schemaPath: "#/properties/%24schema/type", keyword: "type", params: { type: "string" }, message: "must be string", schema: schema0.properties.$schema.type, parentSchema: schema0.properties.$schema, data: data0 };
        if (vErrors === null) {
          vErrors = [err2];
        } else {
          vErrors.push(err2);
        }
        errors++;
      }
    }
    if (data.environment !== void 0) {
      let data1 = data.environment;
      if (typeof data1 === "string") {
        if (!pattern0.test(data1)) {
          const err3 = { instancePath: instancePath + "/environment", schemaPath: "#/properties/environment/pattern", keyword: "pattern", params: { pattern: "^[A-Za-z0-9][A-Za-z0-9._-]*$" }, message: 'must match pattern "^[A-Za-z0-9][A-Za-z0-9._-]*$"', schema: "^[A-Za-z0-9][A-Za-z0-9._-]*$", parentSchema: schema0.properties.environment, data: data1 };
          if (vErrors === null) {
            vErrors = [err3];
          } else {
            vErrors.push(err3);
          }
          errors++;
        }
      } else {
        const err4 = { instancePath: instancePath + "/environment", schemaPath: "#/properties/environment/type", keyword: "type", params: { type: "string" }, message: "must be string", schema: schema0.properties.environment.type, parentSchema: schema0.properties.environment, data: data1 };
        if (vErrors === null) {
          vErrors = [err4];
        } else {
          vErrors.push(err4);
        }
        errors++;
      }
    }
    if (data.tests !== void 0) {
      let data2 = data.tests;
      if (Array.isArray(data2)) {
        const len0 = data2.length;
        for (let i0 = 0; i0 < len0; i0++) {
          if (!validate1(data2[i0], { instancePath: instancePath + "/tests/" + i0, parentData: data2, parentDataProperty: i0, rootData })) {
            vErrors = vErrors === null ? validate1.errors : vErrors.concat(validate1.errors);
            errors = vErrors.length;
          }
        }
      } else {
        const err5 = { instancePath: instancePath + "/tests", schemaPath: "#/properties/tests/type", keyword: "type", params: { type: "array" }, message: "must be array", schema: schema0.properties.tests.type, parentSchema: schema0.properties.tests, data: data2 };
        if (vErrors === null) {
          vErrors = [err5];
        } else {
          vErrors.push(err5);
        }
        errors++;
      }
    }
  } else {
    const err6 = { instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object", schema: schema0.type, parentSchema: schema0, data };
    if (vErrors === null) {
      vErrors = [err6];
    } else {
      vErrors.push(err6);
    }
    errors++;
  }
  validate0.errors = vErrors;
  return errors === 0;
}
export {
  testFile
};
