/*
 * GENERATED: do not edit. The validators of schema/flagserve.schema.json (ajv's standalone code),
 * written by scripts/schema-validators.ts. After a change to the schema, run:
 *
 *   npm run generate:validators
 *
 * test/config/schema-validators.test.ts fails when this file is not what that writes.
 */
// @ts-nocheck
import { createRequire } from "node:module";
const require = createRequire(import.meta.url);
const environment = validate14;
const schema4 = { "title": "Environment", "description": "One environment: its flags, reusable segments, flag-set metadata, API key and notification targets. A subdirectory's files are merged into one environment, so each part is optional here.", "type": "object", "additionalProperties": false, "properties": { "$schema": { "$ref": "#/definitions/schemaKeyword" }, "apiKey": { "title": "API key", "description": "The key clients send (`X-API-Key` or `Authorization: Bearer`). Absent: a random key is generated once and kept in the configuration's private state directory (`flagserve keys dir` prints it). Changed: the old key keeps working for the server's --key-grace (default one hour); `flagserve keys revoke ENV` ends that at once.", "type": "string", "minLength": 8, "maxLength": 256, "pattern": "^[\\x21-\\x7E]+$", "patternErrorMessage": "an API key is sent in an HTTP header: visible ASCII characters only, no spaces" }, "metadata": { "$ref": "#/definitions/metadata", "title": "Flag-set metadata", "description": "Returned with every flag of this environment (a flag's own metadata wins). Values: string, number or boolean." }, "segments": { "$ref": "#/definitions/rules", "title": "Segments", "description": 'Named, reusable targeting rules (JsonLogic), used in flags as { "$ref": "name" }. A rule returning true means the evaluation context is in the segment.' }, "$evaluators": { "$ref": "#/definitions/rules", "title": "Evaluators (flagd)", "description": `flagd's name for segments: reusable targeting rules used as { "$ref": "name" }.` }, "flags": { "title": "Flags", "description": "Flag key -> flag definition (flagd format). flagd's daemon form, an array of flags each with a `key`, is accepted too.", "if": { "type": "array" }, "then": { "$ref": "#/definitions/flagsArray" }, "else": { "$ref": "#/definitions/flagsMap" } }, "notifications": { "title": "Notifications", "description": "Where to announce changes to this environment's flags and segments. `${NAME}` in these strings is replaced by the environment variable NAME.", "type": "array", "items": { "$ref": "#/definitions/notification" } } } };
const schema2 = { "description": "The JSON Schema of this file, for editors. Ignored by flagserve.", "type": "string" };
const schema6 = { "type": "object", "properties": { "flagSetId": { "description": "flagd: the flag set this file belongs to.", "type": ["string", "number", "boolean"] }, "version": { "description": "flagd: the version of the flag set.", "type": ["string", "number", "boolean"] } }, "additionalProperties": { "description": "A string, number or boolean.", "type": ["string", "number", "boolean"] } };
const schema7 = { "type": "object", "propertyNames": { "type": "string", "minLength": 1 }, "additionalProperties": { "description": "A JsonLogic rule.", "type": ["object", "boolean"] } };
const schema23 = { "title": "Notification target", "type": "object", "additionalProperties": false, "required": ["type", "url"], "properties": { "type": { "description": "slack: a Slack incoming webhook. webhook: a JSON POST, signed when `secret` is set.", "type": "string", "enum": ["slack", "webhook"] }, "url": { "description": 'http(s) URL to post to, e.g. "${SLACK_WEBHOOK_URL}" to keep it out of the file.', "type": "string", "minLength": 1 }, "secret": { "description": "webhook: HMAC-SHA256 key for the X-Flagserve-Signature header.", "type": "string", "minLength": 1 }, "events": { "description": "The change kinds to send. Absent: all.", "type": "array", "uniqueItems": true, "items": { "type": "string", "enum": ["flag-created", "flag-updated", "flag-deleted", "segment-created", "segment-updated", "segment-deleted", "api-key-rotated"] } } } };
const func0 = require("ajv/dist/runtime/ucs2length").default;
const pattern1 = new RegExp("^[\\x21-\\x7E]+$", "u");
const schema9 = { "type": "array", "items": { "$ref": "#/definitions/flagWithKey" } };
const schema10 = { "title": "Flag", "description": "A feature flag in flagd's array form: `key` names it.", "type": "object", "additionalProperties": false, "required": ["key", "variants"], "properties": { "key": { "title": "Flag key", "type": "string", "minLength": 1 }, "state": { "$ref": "#/definitions/state" }, "variants": { "$ref": "#/definitions/variants" }, "defaultVariant": { "$ref": "#/definitions/defaultVariant" }, "targeting": { "$ref": "#/definitions/targeting" }, "metadata": { "$ref": "#/definitions/flagMetadata" } } };
const schema11 = { "title": "State", "description": "DISABLED: evaluations return reason DISABLED and no value.", "type": "string", "enum": ["ENABLED", "DISABLED"], "default": "ENABLED" };
const schema12 = { "title": "Variants", "description": "Variant name -> value. All values have one type: all boolean, all string, all number, or all object.", "type": "object", "minProperties": 1, "propertyNames": { "type": "string", "minLength": 1 }, "anyOf": [{ "title": "Boolean variants", "type": "object", "additionalProperties": { "type": "boolean" } }, { "title": "String variants", "type": "object", "additionalProperties": { "type": "string" } }, { "title": "Number variants", "type": "object", "additionalProperties": { "type": "number" } }, { "title": "Object variants", "type": "object", "additionalProperties": { "type": "object" } }] };
const schema13 = { "title": "Default variant", "description": "The variant served when targeting is absent or returns null. null or absent: the caller's code default.", "type": ["string", "null"] };
const schema14 = { "title": "Targeting", "description": 'A JsonLogic rule returning a variant name (or null for the default). Operators: all JsonLogic, plus fractional, sem_ver, starts_with, ends_with, and { "$ref": "segment" }.', "type": "object" };
function validate4(data, { instancePath = "", parentData, parentDataProperty, rootData = data } = {}) {
  let vErrors = null;
  let errors = 0;
  if (data && typeof data == "object" && !Array.isArray(data)) {
    if (data.key === void 0) {
      const err0 = { instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: "key" }, message: "must have required property 'key'", schema: schema10.required, parentSchema: schema10, data };
      if (vErrors === null) {
        vErrors = [err0];
      } else {
        vErrors.push(err0);
      }
      errors++;
    }
    if (data.variants === void 0) {
      const err1 = { instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: "variants" }, message: "must have required property 'variants'", schema: schema10.required, parentSchema: schema10, data };
      if (vErrors === null) {
        vErrors = [err1];
      } else {
        vErrors.push(err1);
      }
      errors++;
    }
    for (const key0 in data) {
      if (!(key0 === "key" || key0 === "state" || key0 === "variants" || key0 === "defaultVariant" || key0 === "targeting" || key0 === "metadata")) {
        const err2 = { instancePath, schemaPath: "#/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties", schema: false, parentSchema: schema10, data };
        if (vErrors === null) {
          vErrors = [err2];
        } else {
          vErrors.push(err2);
        }
        errors++;
      }
    }
    if (data.key !== void 0) {
      let data0 = data.key;
      if (typeof data0 === "string") {
        if (func0(data0) < 1) {
          const err3 = { instancePath: instancePath + "/key", schemaPath: "#/properties/key/minLength", keyword: "minLength", params: { limit: 1 }, message: "must NOT have fewer than 1 characters", schema: 1, parentSchema: schema10.properties.key, data: data0 };
          if (vErrors === null) {
            vErrors = [err3];
          } else {
            vErrors.push(err3);
          }
          errors++;
        }
      } else {
        const err4 = { instancePath: instancePath + "/key", schemaPath: "#/properties/key/type", keyword: "type", params: { type: "string" }, message: "must be string", schema: schema10.properties.key.type, parentSchema: schema10.properties.key, data: data0 };
        if (vErrors === null) {
          vErrors = [err4];
        } else {
          vErrors.push(err4);
        }
        errors++;
      }
    }
    if (data.state !== void 0) {
      let data1 = data.state;
      if (typeof data1 !== "string") {
        const err5 = { instancePath: instancePath + "/state", schemaPath: "#/definitions/state/type", keyword: "type", params: { type: "string" }, message: "must be string", schema: schema11.type, parentSchema: schema11, data: data1 };
        if (vErrors === null) {
          vErrors = [err5];
        } else {
          vErrors.push(err5);
        }
        errors++;
      }
      if (!(data1 === "ENABLED" || data1 === "DISABLED")) {
        const err6 = { instancePath: instancePath + "/state", schemaPath: "#/definitions/state/enum", keyword: "enum", params: { allowedValues: schema11.enum }, message: "must be equal to one of the allowed values", schema: schema11.enum, parentSchema: schema11, data: data1 };
        if (vErrors === null) {
          vErrors = [err6];
        } else {
          vErrors.push(err6);
        }
        errors++;
      }
    }
    if (data.variants !== void 0) {
      let data2 = data.variants;
      const _errs10 = errors;
      let valid3 = false;
      const _errs11 = errors;
      if (data2 && typeof data2 == "object" && !Array.isArray(data2)) {
        for (const key1 in data2) {
          let data3 = data2[key1];
          if (typeof data3 !== "boolean") {
            const err7 = { instancePath: instancePath + "/variants/" + key1.replace(/~/g, "~0").replace(/\//g, "~1"), schemaPath: "#/definitions/variants/anyOf/0/additionalProperties/type", keyword: "type", params: { type: "boolean" }, message: "must be boolean", schema: schema12.anyOf[0].additionalProperties.type, parentSchema: schema12.anyOf[0].additionalProperties, data: data3 };
            if (vErrors === null) {
              vErrors = [err7];
            } else {
              vErrors.push(err7);
            }
            errors++;
          }
        }
      } else {
        const err8 = { instancePath: instancePath + "/variants", schemaPath: "#/definitions/variants/anyOf/0/type", keyword: "type", params: { type: "object" }, message: "must be object", schema: schema12.anyOf[0].type, parentSchema: schema12.anyOf[0], data: data2 };
        if (vErrors === null) {
          vErrors = [err8];
        } else {
          vErrors.push(err8);
        }
        errors++;
      }
      var _valid0 = _errs11 === errors;
      valid3 = valid3 || _valid0;
      if (!valid3) {
        const _errs16 = errors;
        if (data2 && typeof data2 == "object" && !Array.isArray(data2)) {
          for (const key2 in data2) {
            let data4 = data2[key2];
            if (typeof data4 !== "string") {
              const err9 = { instancePath: instancePath + "/variants/" + key2.replace(/~/g, "~0").replace(/\//g, "~1"), schemaPath: "#/definitions/variants/anyOf/1/additionalProperties/type", keyword: "type", params: { type: "string" }, message: "must be string", schema: schema12.anyOf[1].additionalProperties.type, parentSchema: schema12.anyOf[1].additionalProperties, data: data4 };
              if (vErrors === null) {
                vErrors = [err9];
              } else {
                vErrors.push(err9);
              }
              errors++;
            }
          }
        } else {
          const err10 = { instancePath: instancePath + "/variants", schemaPath: "#/definitions/variants/anyOf/1/type", keyword: "type", params: { type: "object" }, message: "must be object", schema: schema12.anyOf[1].type, parentSchema: schema12.anyOf[1], data: data2 };
          if (vErrors === null) {
            vErrors = [err10];
          } else {
            vErrors.push(err10);
          }
          errors++;
        }
        var _valid0 = _errs16 === errors;
        valid3 = valid3 || _valid0;
        if (!valid3) {
          const _errs21 = errors;
          if (data2 && typeof data2 == "object" && !Array.isArray(data2)) {
            for (const key3 in data2) {
              let data5 = data2[key3];
              if (!(typeof data5 == "number" && isFinite(data5))) {
                const err11 = { instancePath: instancePath + "/variants/" + key3.replace(/~/g, "~0").replace(/\//g, "~1"), schemaPath: "#/definitions/variants/anyOf/2/additionalProperties/type", keyword: "type", params: { type: "number" }, message: "must be number", schema: schema12.anyOf[2].additionalProperties.type, parentSchema: schema12.anyOf[2].additionalProperties, data: data5 };
                if (vErrors === null) {
                  vErrors = [err11];
                } else {
                  vErrors.push(err11);
                }
                errors++;
              }
            }
          } else {
            const err12 = { instancePath: instancePath + "/variants", schemaPath: "#/definitions/variants/anyOf/2/type", keyword: "type", params: { type: "object" }, message: "must be object", schema: schema12.anyOf[2].type, parentSchema: schema12.anyOf[2], data: data2 };
            if (vErrors === null) {
              vErrors = [err12];
            } else {
              vErrors.push(err12);
            }
            errors++;
          }
          var _valid0 = _errs21 === errors;
          valid3 = valid3 || _valid0;
          if (!valid3) {
            const _errs26 = errors;
            if (data2 && typeof data2 == "object" && !Array.isArray(data2)) {
              for (const key4 in data2) {
                let data6 = data2[key4];
                if (!(data6 && typeof data6 == "object" && !Array.isArray(data6))) {
                  const err13 = { instancePath: instancePath + "/variants/" + key4.replace(/~/g, "~0").replace(/\//g, "~1"), schemaPath: "#/definitions/variants/anyOf/3/additionalProperties/type", keyword: "type", params: { type: "object" }, message: "must be object", schema: schema12.anyOf[3].additionalProperties.type, parentSchema: schema12.anyOf[3].additionalProperties, data: data6 };
                  if (vErrors === null) {
                    vErrors = [err13];
                  } else {
                    vErrors.push(err13);
                  }
                  errors++;
                }
              }
            } else {
              const err14 = { instancePath: instancePath + "/variants", schemaPath: "#/definitions/variants/anyOf/3/type", keyword: "type", params: { type: "object" }, message: "must be object", schema: schema12.anyOf[3].type, parentSchema: schema12.anyOf[3], data: data2 };
              if (vErrors === null) {
                vErrors = [err14];
              } else {
                vErrors.push(err14);
              }
              errors++;
            }
            var _valid0 = _errs26 === errors;
            valid3 = valid3 || _valid0;
          }
        }
      }
      if (!valid3) {
        const err15 = { instancePath: instancePath + "/variants", schemaPath: "#/definitions/variants/anyOf", keyword: "anyOf", params: {}, message: "must match a schema in anyOf", schema: schema12.anyOf, parentSchema: schema12, data: data2 };
        if (vErrors === null) {
          vErrors = [err15];
        } else {
          vErrors.push(err15);
        }
        errors++;
      } else {
        errors = _errs10;
        if (vErrors !== null) {
          if (_errs10) {
            vErrors.length = _errs10;
          } else {
            vErrors = null;
          }
        }
      }
      if (data2 && typeof data2 == "object" && !Array.isArray(data2)) {
        if (Object.keys(data2).length < 1) {
          const err16 = { instancePath: instancePath + "/variants", schemaPath: "#/definitions/variants/minProperties", keyword: "minProperties", params: { limit: 1 }, message: "must NOT have fewer than 1 properties", schema: 1, parentSchema: schema12, data: data2 };
          if (vErrors === null) {
            vErrors = [err16];
          } else {
            vErrors.push(err16);
          }
          errors++;
        }
        for (const key5 in data2) {
          const _errs31 = errors;
          if (typeof key5 === "string") {
            if (func0(key5) < 1) {
              const err17 = { instancePath: instancePath + "/variants", schemaPath: "#/definitions/variants/propertyNames/minLength", keyword: "minLength", params: { limit: 1 }, message: "must NOT have fewer than 1 characters", schema: 1, parentSchema: schema12.propertyNames, data: key5, propertyName: key5 };
              if (vErrors === null) {
                vErrors = [err17];
              } else {
                vErrors.push(err17);
              }
              errors++;
            }
          } else {
            const err18 = { instancePath: instancePath + "/variants", schemaPath: "#/definitions/variants/propertyNames/type", keyword: "type", params: { type: "string" }, message: "must be string", schema: schema12.propertyNames.type, parentSchema: schema12.propertyNames, data: key5, propertyName: key5 };
            if (vErrors === null) {
              vErrors = [err18];
            } else {
              vErrors.push(err18);
            }
            errors++;
          }
          var valid8 = _errs31 === errors;
          if (!valid8) {
            const err19 = { instancePath: instancePath + "/variants", schemaPath: "#/definitions/variants/propertyNames", keyword: "propertyNames", params: { propertyName: key5 }, message: "property name must be valid", schema: schema12.propertyNames, parentSchema: schema12, data: data2 };
            if (vErrors === null) {
              vErrors = [err19];
            } else {
              vErrors.push(err19);
            }
            errors++;
          }
        }
      } else {
        const err20 = { instancePath: instancePath + "/variants", schemaPath: "#/definitions/variants/type", keyword: "type", params: { type: "object" }, message: "must be object", schema: schema12.type, parentSchema: schema12, data: data2 };
        if (vErrors === null) {
          vErrors = [err20];
        } else {
          vErrors.push(err20);
        }
        errors++;
      }
    }
    if (data.defaultVariant !== void 0) {
      let data7 = data.defaultVariant;
      if (typeof data7 !== "string" && data7 !== null) {
        const err21 = { instancePath: instancePath + "/defaultVariant", schemaPath: "#/definitions/defaultVariant/type", keyword: "type", params: { type: schema13.type }, message: "must be string,null", schema: schema13.type, parentSchema: schema13, data: data7 };
        if (vErrors === null) {
          vErrors = [err21];
        } else {
          vErrors.push(err21);
        }
        errors++;
      }
    }
    if (data.targeting !== void 0) {
      let data8 = data.targeting;
      if (!(data8 && typeof data8 == "object" && !Array.isArray(data8))) {
        const err22 = { instancePath: instancePath + "/targeting", schemaPath: "#/definitions/targeting/type", keyword: "type", params: { type: "object" }, message: "must be object", schema: schema14.type, parentSchema: schema14, data: data8 };
        if (vErrors === null) {
          vErrors = [err22];
        } else {
          vErrors.push(err22);
        }
        errors++;
      }
    }
    if (data.metadata !== void 0) {
      let data9 = data.metadata;
      if (data9 && typeof data9 == "object" && !Array.isArray(data9)) {
        for (const key6 in data9) {
          if (!(key6 === "flagSetId" || key6 === "version")) {
            let data10 = data9[key6];
            if (typeof data10 !== "string" && !(typeof data10 == "number" && isFinite(data10)) && typeof data10 !== "boolean") {
              const err23 = { instancePath: instancePath + "/metadata/" + key6.replace(/~/g, "~0").replace(/\//g, "~1"), schemaPath: "#/definitions/flagMetadata/additionalProperties/type", keyword: "type", params: { type: schema6.additionalProperties.type }, message: "must be string,number,boolean", schema: schema6.additionalProperties.type, parentSchema: schema6.additionalProperties, data: data10 };
              if (vErrors === null) {
                vErrors = [err23];
              } else {
                vErrors.push(err23);
              }
              errors++;
            }
          }
        }
        if (data9.flagSetId !== void 0) {
          let data11 = data9.flagSetId;
          if (typeof data11 !== "string" && !(typeof data11 == "number" && isFinite(data11)) && typeof data11 !== "boolean") {
            const err24 = { instancePath: instancePath + "/metadata/flagSetId", schemaPath: "#/definitions/flagMetadata/properties/flagSetId/type", keyword: "type", params: { type: schema6.properties.flagSetId.type }, message: "must be string,number,boolean", schema: schema6.properties.flagSetId.type, parentSchema: schema6.properties.flagSetId, data: data11 };
            if (vErrors === null) {
              vErrors = [err24];
            } else {
              vErrors.push(err24);
            }
            errors++;
          }
        }
        if (data9.version !== void 0) {
          let data12 = data9.version;
          if (typeof data12 !== "string" && !(typeof data12 == "number" && isFinite(data12)) && typeof data12 !== "boolean") {
            const err25 = { instancePath: instancePath + "/metadata/version", schemaPath: "#/definitions/flagMetadata/properties/version/type", keyword: "type", params: { type: schema6.properties.version.type }, message: "must be string,number,boolean", schema: schema6.properties.version.type, parentSchema: schema6.properties.version, data: data12 };
            if (vErrors === null) {
              vErrors = [err25];
            } else {
              vErrors.push(err25);
            }
            errors++;
          }
        }
      } else {
        const err26 = { instancePath: instancePath + "/metadata", schemaPath: "#/definitions/flagMetadata/type", keyword: "type", params: { type: "object" }, message: "must be object", schema: schema6.type, parentSchema: schema6, data: data9 };
        if (vErrors === null) {
          vErrors = [err26];
        } else {
          vErrors.push(err26);
        }
        errors++;
      }
    }
  } else {
    const err27 = { instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object", schema: schema10.type, parentSchema: schema10, data };
    if (vErrors === null) {
      vErrors = [err27];
    } else {
      vErrors.push(err27);
    }
    errors++;
  }
  validate4.errors = vErrors;
  return errors === 0;
}
function validate3(data, { instancePath = "", parentData, parentDataProperty, rootData = data } = {}) {
  let vErrors = null;
  let errors = 0;
  if (Array.isArray(data)) {
    const len0 = data.length;
    for (let i0 = 0; i0 < len0; i0++) {
      if (!validate4(data[i0], { instancePath: instancePath + "/" + i0, parentData: data, parentDataProperty: i0, rootData })) {
        vErrors = vErrors === null ? validate4.errors : vErrors.concat(validate4.errors);
        errors = vErrors.length;
      }
    }
  } else {
    const err0 = { instancePath, schemaPath: "#/type", keyword: "type", params: { type: "array" }, message: "must be array", schema: schema9.type, parentSchema: schema9, data };
    if (vErrors === null) {
      vErrors = [err0];
    } else {
      vErrors.push(err0);
    }
    errors++;
  }
  validate3.errors = vErrors;
  return errors === 0;
}
const schema16 = { "type": "object", "propertyNames": { "type": "string", "minLength": 1 }, "additionalProperties": { "$ref": "#/definitions/flag" } };
const schema17 = { "title": "Flag", "description": "A feature flag: its variants, the default one, and optional targeting.", "type": "object", "additionalProperties": false, "required": ["variants"], "properties": { "state": { "$ref": "#/definitions/state" }, "variants": { "$ref": "#/definitions/variants" }, "defaultVariant": { "$ref": "#/definitions/defaultVariant" }, "targeting": { "$ref": "#/definitions/targeting" }, "metadata": { "$ref": "#/definitions/flagMetadata" } } };
function validate8(data, { instancePath = "", parentData, parentDataProperty, rootData = data } = {}) {
  let vErrors = null;
  let errors = 0;
  if (data && typeof data == "object" && !Array.isArray(data)) {
    if (data.variants === void 0) {
      const err0 = { instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: "variants" }, message: "must have required property 'variants'", schema: schema17.required, parentSchema: schema17, data };
      if (vErrors === null) {
        vErrors = [err0];
      } else {
        vErrors.push(err0);
      }
      errors++;
    }
    for (const key0 in data) {
      if (!(key0 === "state" || key0 === "variants" || key0 === "defaultVariant" || key0 === "targeting" || key0 === "metadata")) {
        const err1 = { instancePath, schemaPath: "#/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties", schema: false, parentSchema: schema17, data };
        if (vErrors === null) {
          vErrors = [err1];
        } else {
          vErrors.push(err1);
        }
        errors++;
      }
    }
    if (data.state !== void 0) {
      let data0 = data.state;
      if (typeof data0 !== "string") {
        const err2 = { instancePath: instancePath + "/state", schemaPath: "#/definitions/state/type", keyword: "type", params: { type: "string" }, message: "must be string", schema: schema11.type, parentSchema: schema11, data: data0 };
        if (vErrors === null) {
          vErrors = [err2];
        } else {
          vErrors.push(err2);
        }
        errors++;
      }
      if (!(data0 === "ENABLED" || data0 === "DISABLED")) {
        const err3 = { instancePath: instancePath + "/state", schemaPath: "#/definitions/state/enum", keyword: "enum", params: { allowedValues: schema11.enum }, message: "must be equal to one of the allowed values", schema: schema11.enum, parentSchema: schema11, data: data0 };
        if (vErrors === null) {
          vErrors = [err3];
        } else {
          vErrors.push(err3);
        }
        errors++;
      }
    }
    if (data.variants !== void 0) {
      let data1 = data.variants;
      const _errs8 = errors;
      let valid3 = false;
      const _errs9 = errors;
      if (data1 && typeof data1 == "object" && !Array.isArray(data1)) {
        for (const key1 in data1) {
          let data2 = data1[key1];
          if (typeof data2 !== "boolean") {
            const err4 = { instancePath: instancePath + "/variants/" + key1.replace(/~/g, "~0").replace(/\//g, "~1"), schemaPath: "#/definitions/variants/anyOf/0/additionalProperties/type", keyword: "type", params: { type: "boolean" }, message: "must be boolean", schema: schema12.anyOf[0].additionalProperties.type, parentSchema: schema12.anyOf[0].additionalProperties, data: data2 };
            if (vErrors === null) {
              vErrors = [err4];
            } else {
              vErrors.push(err4);
            }
            errors++;
          }
        }
      } else {
        const err5 = { instancePath: instancePath + "/variants", schemaPath: "#/definitions/variants/anyOf/0/type", keyword: "type", params: { type: "object" }, message: "must be object", schema: schema12.anyOf[0].type, parentSchema: schema12.anyOf[0], data: data1 };
        if (vErrors === null) {
          vErrors = [err5];
        } else {
          vErrors.push(err5);
        }
        errors++;
      }
      var _valid0 = _errs9 === errors;
      valid3 = valid3 || _valid0;
      if (!valid3) {
        const _errs14 = errors;
        if (data1 && typeof data1 == "object" && !Array.isArray(data1)) {
          for (const key2 in data1) {
            let data3 = data1[key2];
            if (typeof data3 !== "string") {
              const err6 = { instancePath: instancePath + "/variants/" + key2.replace(/~/g, "~0").replace(/\//g, "~1"), schemaPath: "#/definitions/variants/anyOf/1/additionalProperties/type", keyword: "type", params: { type: "string" }, message: "must be string", schema: schema12.anyOf[1].additionalProperties.type, parentSchema: schema12.anyOf[1].additionalProperties, data: data3 };
              if (vErrors === null) {
                vErrors = [err6];
              } else {
                vErrors.push(err6);
              }
              errors++;
            }
          }
        } else {
          const err7 = { instancePath: instancePath + "/variants", schemaPath: "#/definitions/variants/anyOf/1/type", keyword: "type", params: { type: "object" }, message: "must be object", schema: schema12.anyOf[1].type, parentSchema: schema12.anyOf[1], data: data1 };
          if (vErrors === null) {
            vErrors = [err7];
          } else {
            vErrors.push(err7);
          }
          errors++;
        }
        var _valid0 = _errs14 === errors;
        valid3 = valid3 || _valid0;
        if (!valid3) {
          const _errs19 = errors;
          if (data1 && typeof data1 == "object" && !Array.isArray(data1)) {
            for (const key3 in data1) {
              let data4 = data1[key3];
              if (!(typeof data4 == "number" && isFinite(data4))) {
                const err8 = { instancePath: instancePath + "/variants/" + key3.replace(/~/g, "~0").replace(/\//g, "~1"), schemaPath: "#/definitions/variants/anyOf/2/additionalProperties/type", keyword: "type", params: { type: "number" }, message: "must be number", schema: schema12.anyOf[2].additionalProperties.type, parentSchema: schema12.anyOf[2].additionalProperties, data: data4 };
                if (vErrors === null) {
                  vErrors = [err8];
                } else {
                  vErrors.push(err8);
                }
                errors++;
              }
            }
          } else {
            const err9 = { instancePath: instancePath + "/variants", schemaPath: "#/definitions/variants/anyOf/2/type", keyword: "type", params: { type: "object" }, message: "must be object", schema: schema12.anyOf[2].type, parentSchema: schema12.anyOf[2], data: data1 };
            if (vErrors === null) {
              vErrors = [err9];
            } else {
              vErrors.push(err9);
            }
            errors++;
          }
          var _valid0 = _errs19 === errors;
          valid3 = valid3 || _valid0;
          if (!valid3) {
            const _errs24 = errors;
            if (data1 && typeof data1 == "object" && !Array.isArray(data1)) {
              for (const key4 in data1) {
                let data5 = data1[key4];
                if (!(data5 && typeof data5 == "object" && !Array.isArray(data5))) {
                  const err10 = { instancePath: instancePath + "/variants/" + key4.replace(/~/g, "~0").replace(/\//g, "~1"), schemaPath: "#/definitions/variants/anyOf/3/additionalProperties/type", keyword: "type", params: { type: "object" }, message: "must be object", schema: schema12.anyOf[3].additionalProperties.type, parentSchema: schema12.anyOf[3].additionalProperties, data: data5 };
                  if (vErrors === null) {
                    vErrors = [err10];
                  } else {
                    vErrors.push(err10);
                  }
                  errors++;
                }
              }
            } else {
              const err11 = { instancePath: instancePath + "/variants", schemaPath: "#/definitions/variants/anyOf/3/type", keyword: "type", params: { type: "object" }, message: "must be object", schema: schema12.anyOf[3].type, parentSchema: schema12.anyOf[3], data: data1 };
              if (vErrors === null) {
                vErrors = [err11];
              } else {
                vErrors.push(err11);
              }
              errors++;
            }
            var _valid0 = _errs24 === errors;
            valid3 = valid3 || _valid0;
          }
        }
      }
      if (!valid3) {
        const err12 = { instancePath: instancePath + "/variants", schemaPath: "#/definitions/variants/anyOf", keyword: "anyOf", params: {}, message: "must match a schema in anyOf", schema: schema12.anyOf, parentSchema: schema12, data: data1 };
        if (vErrors === null) {
          vErrors = [err12];
        } else {
          vErrors.push(err12);
        }
        errors++;
      } else {
        errors = _errs8;
        if (vErrors !== null) {
          if (_errs8) {
            vErrors.length = _errs8;
          } else {
            vErrors = null;
          }
        }
      }
      if (data1 && typeof data1 == "object" && !Array.isArray(data1)) {
        if (Object.keys(data1).length < 1) {
          const err13 = { instancePath: instancePath + "/variants", schemaPath: "#/definitions/variants/minProperties", keyword: "minProperties", params: { limit: 1 }, message: "must NOT have fewer than 1 properties", schema: 1, parentSchema: schema12, data: data1 };
          if (vErrors === null) {
            vErrors = [err13];
          } else {
            vErrors.push(err13);
          }
          errors++;
        }
        for (const key5 in data1) {
          const _errs29 = errors;
          if (typeof key5 === "string") {
            if (func0(key5) < 1) {
              const err14 = { instancePath: instancePath + "/variants", schemaPath: "#/definitions/variants/propertyNames/minLength", keyword: "minLength", params: { limit: 1 }, message: "must NOT have fewer than 1 characters", schema: 1, parentSchema: schema12.propertyNames, data: key5, propertyName: key5 };
              if (vErrors === null) {
                vErrors = [err14];
              } else {
                vErrors.push(err14);
              }
              errors++;
            }
          } else {
            const err15 = { instancePath: instancePath + "/variants", schemaPath: "#/definitions/variants/propertyNames/type", keyword: "type", params: { type: "string" }, message: "must be string", schema: schema12.propertyNames.type, parentSchema: schema12.propertyNames, data: key5, propertyName: key5 };
            if (vErrors === null) {
              vErrors = [err15];
            } else {
              vErrors.push(err15);
            }
            errors++;
          }
          var valid8 = _errs29 === errors;
          if (!valid8) {
            const err16 = { instancePath: instancePath + "/variants", schemaPath: "#/definitions/variants/propertyNames", keyword: "propertyNames", params: { propertyName: key5 }, message: "property name must be valid", schema: schema12.propertyNames, parentSchema: schema12, data: data1 };
            if (vErrors === null) {
              vErrors = [err16];
            } else {
              vErrors.push(err16);
            }
            errors++;
          }
        }
      } else {
        const err17 = { instancePath: instancePath + "/variants", schemaPath: "#/definitions/variants/type", keyword: "type", params: { type: "object" }, message: "must be object", schema: schema12.type, parentSchema: schema12, data: data1 };
        if (vErrors === null) {
          vErrors = [err17];
        } else {
          vErrors.push(err17);
        }
        errors++;
      }
    }
    if (data.defaultVariant !== void 0) {
      let data6 = data.defaultVariant;
      if (typeof data6 !== "string" && data6 !== null) {
        const err18 = { instancePath: instancePath + "/defaultVariant", schemaPath: "#/definitions/defaultVariant/type", keyword: "type", params: { type: schema13.type }, message: "must be string,null", schema: schema13.type, parentSchema: schema13, data: data6 };
        if (vErrors === null) {
          vErrors = [err18];
        } else {
          vErrors.push(err18);
        }
        errors++;
      }
    }
    if (data.targeting !== void 0) {
      let data7 = data.targeting;
      if (!(data7 && typeof data7 == "object" && !Array.isArray(data7))) {
        const err19 = { instancePath: instancePath + "/targeting", schemaPath: "#/definitions/targeting/type", keyword: "type", params: { type: "object" }, message: "must be object", schema: schema14.type, parentSchema: schema14, data: data7 };
        if (vErrors === null) {
          vErrors = [err19];
        } else {
          vErrors.push(err19);
        }
        errors++;
      }
    }
    if (data.metadata !== void 0) {
      let data8 = data.metadata;
      if (data8 && typeof data8 == "object" && !Array.isArray(data8)) {
        for (const key6 in data8) {
          if (!(key6 === "flagSetId" || key6 === "version")) {
            let data9 = data8[key6];
            if (typeof data9 !== "string" && !(typeof data9 == "number" && isFinite(data9)) && typeof data9 !== "boolean") {
              const err20 = { instancePath: instancePath + "/metadata/" + key6.replace(/~/g, "~0").replace(/\//g, "~1"), schemaPath: "#/definitions/flagMetadata/additionalProperties/type", keyword: "type", params: { type: schema6.additionalProperties.type }, message: "must be string,number,boolean", schema: schema6.additionalProperties.type, parentSchema: schema6.additionalProperties, data: data9 };
              if (vErrors === null) {
                vErrors = [err20];
              } else {
                vErrors.push(err20);
              }
              errors++;
            }
          }
        }
        if (data8.flagSetId !== void 0) {
          let data10 = data8.flagSetId;
          if (typeof data10 !== "string" && !(typeof data10 == "number" && isFinite(data10)) && typeof data10 !== "boolean") {
            const err21 = { instancePath: instancePath + "/metadata/flagSetId", schemaPath: "#/definitions/flagMetadata/properties/flagSetId/type", keyword: "type", params: { type: schema6.properties.flagSetId.type }, message: "must be string,number,boolean", schema: schema6.properties.flagSetId.type, parentSchema: schema6.properties.flagSetId, data: data10 };
            if (vErrors === null) {
              vErrors = [err21];
            } else {
              vErrors.push(err21);
            }
            errors++;
          }
        }
        if (data8.version !== void 0) {
          let data11 = data8.version;
          if (typeof data11 !== "string" && !(typeof data11 == "number" && isFinite(data11)) && typeof data11 !== "boolean") {
            const err22 = { instancePath: instancePath + "/metadata/version", schemaPath: "#/definitions/flagMetadata/properties/version/type", keyword: "type", params: { type: schema6.properties.version.type }, message: "must be string,number,boolean", schema: schema6.properties.version.type, parentSchema: schema6.properties.version, data: data11 };
            if (vErrors === null) {
              vErrors = [err22];
            } else {
              vErrors.push(err22);
            }
            errors++;
          }
        }
      } else {
        const err23 = { instancePath: instancePath + "/metadata", schemaPath: "#/definitions/flagMetadata/type", keyword: "type", params: { type: "object" }, message: "must be object", schema: schema6.type, parentSchema: schema6, data: data8 };
        if (vErrors === null) {
          vErrors = [err23];
        } else {
          vErrors.push(err23);
        }
        errors++;
      }
    }
  } else {
    const err24 = { instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object", schema: schema17.type, parentSchema: schema17, data };
    if (vErrors === null) {
      vErrors = [err24];
    } else {
      vErrors.push(err24);
    }
    errors++;
  }
  validate8.errors = vErrors;
  return errors === 0;
}
function validate7(data, { instancePath = "", parentData, parentDataProperty, rootData = data } = {}) {
  let vErrors = null;
  let errors = 0;
  if (data && typeof data == "object" && !Array.isArray(data)) {
    for (const key0 in data) {
      const _errs1 = errors;
      if (typeof key0 === "string") {
        if (func0(key0) < 1) {
          const err0 = { instancePath, schemaPath: "#/propertyNames/minLength", keyword: "minLength", params: { limit: 1 }, message: "must NOT have fewer than 1 characters", schema: 1, parentSchema: schema16.propertyNames, data: key0, propertyName: key0 };
          if (vErrors === null) {
            vErrors = [err0];
          } else {
            vErrors.push(err0);
          }
          errors++;
        }
      } else {
        const err1 = { instancePath, schemaPath: "#/propertyNames/type", keyword: "type", params: { type: "string" }, message: "must be string", schema: schema16.propertyNames.type, parentSchema: schema16.propertyNames, data: key0, propertyName: key0 };
        if (vErrors === null) {
          vErrors = [err1];
        } else {
          vErrors.push(err1);
        }
        errors++;
      }
      var valid0 = _errs1 === errors;
      if (!valid0) {
        const err2 = { instancePath, schemaPath: "#/propertyNames", keyword: "propertyNames", params: { propertyName: key0 }, message: "property name must be valid", schema: schema16.propertyNames, parentSchema: schema16, data };
        if (vErrors === null) {
          vErrors = [err2];
        } else {
          vErrors.push(err2);
        }
        errors++;
      }
    }
    for (const key1 in data) {
      if (!validate8(data[key1], { instancePath: instancePath + "/" + key1.replace(/~/g, "~0").replace(/\//g, "~1"), parentData: data, parentDataProperty: key1, rootData })) {
        vErrors = vErrors === null ? validate8.errors : vErrors.concat(validate8.errors);
        errors = vErrors.length;
      }
    }
  } else {
    const err3 = { instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object", schema: schema16.type, parentSchema: schema16, data };
    if (vErrors === null) {
      vErrors = [err3];
    } else {
      vErrors.push(err3);
    }
    errors++;
  }
  validate7.errors = vErrors;
  return errors === 0;
}
function validate14(data, { instancePath = "", parentData, parentDataProperty, rootData = data } = {}) {
  let vErrors = null;
  let errors = 0;
  if (data && typeof data == "object" && !Array.isArray(data)) {
    for (const key0 in data) {
      if (!(key0 === "$schema" || key0 === "apiKey" || key0 === "metadata" || key0 === "segments" || key0 === "$evaluators" || key0 === "flags" || key0 === "notifications")) {
        const err0 = { instancePath, schemaPath: "#/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties", schema: false, parentSchema: schema4, data };
        if (vErrors === null) {
          vErrors = [err0];
        } else {
          vErrors.push(err0);
        }
        errors++;
      }
    }
    if (data.$schema !== void 0) {
      let data0 = data.$schema;
      if (typeof data0 !== "string") {
        const err1 = { instancePath: instancePath + "/$schema", schemaPath: "#/definitions/schemaKeyword/type", keyword: "type", params: { type: "string" }, message: "must be string", schema: schema2.type, parentSchema: schema2, data: data0 };
        if (vErrors === null) {
          vErrors = [err1];
        } else {
          vErrors.push(err1);
        }
        errors++;
      }
    }
    if (data.apiKey !== void 0) {
      let data1 = data.apiKey;
      if (typeof data1 === "string") {
        if (func0(data1) > 256) {
          const err2 = { instancePath: instancePath + "/apiKey", schemaPath: "#/properties/apiKey/maxLength", keyword: "maxLength", params: { limit: 256 }, message: "must NOT have more than 256 characters", schema: 256, parentSchema: schema4.properties.apiKey, data: data1 };
          if (vErrors === null) {
            vErrors = [err2];
          } else {
            vErrors.push(err2);
          }
          errors++;
        }
        if (func0(data1) < 8) {
          const err3 = { instancePath: instancePath + "/apiKey", schemaPath: "#/properties/apiKey/minLength", keyword: "minLength", params: { limit: 8 }, message: "must NOT have fewer than 8 characters", schema: 8, parentSchema: schema4.properties.apiKey, data: data1 };
          if (vErrors === null) {
            vErrors = [err3];
          } else {
            vErrors.push(err3);
          }
          errors++;
        }
        if (!pattern1.test(data1)) {
          const err4 = { instancePath: instancePath + "/apiKey", schemaPath: "#/properties/apiKey/pattern", keyword: "pattern", params: { pattern: "^[\\x21-\\x7E]+$" }, message: 'must match pattern "^[\\x21-\\x7E]+$"', schema: "^[\\x21-\\x7E]+$", parentSchema: schema4.properties.apiKey, data: data1 };
          if (vErrors === null) {
            vErrors = [err4];
          } else {
            vErrors.push(err4);
          }
          errors++;
        }
      } else {
        const err5 = { instancePath: instancePath + "/apiKey", schemaPath: "#/properties/apiKey/type", keyword: "type", params: { type: "string" }, message: "must be string", schema: schema4.properties.apiKey.type, parentSchema: schema4.properties.apiKey, data: data1 };
        if (vErrors === null) {
          vErrors = [err5];
        } else {
          vErrors.push(err5);
        }
        errors++;
      }
    }
    if (data.metadata !== void 0) {
      let data2 = data.metadata;
      if (data2 && typeof data2 == "object" && !Array.isArray(data2)) {
        for (const key1 in data2) {
          if (!(key1 === "flagSetId" || key1 === "version")) {
            let data3 = data2[key1];
            if (typeof data3 !== "string" && !(typeof data3 == "number" && isFinite(data3)) && typeof data3 !== "boolean") {
              const err6 = { instancePath: instancePath + "/metadata/" + key1.replace(/~/g, "~0").replace(/\//g, "~1"), schemaPath: "#/definitions/metadata/additionalProperties/type", keyword: "type", params: { type: schema6.additionalProperties.type }, message: "must be string,number,boolean", schema: schema6.additionalProperties.type, parentSchema: schema6.additionalProperties, data: data3 };
              if (vErrors === null) {
                vErrors = [err6];
              } else {
                vErrors.push(err6);
              }
              errors++;
            }
          }
        }
        if (data2.flagSetId !== void 0) {
          let data4 = data2.flagSetId;
          if (typeof data4 !== "string" && !(typeof data4 == "number" && isFinite(data4)) && typeof data4 !== "boolean") {
            const err7 = { instancePath: instancePath + "/metadata/flagSetId", schemaPath: "#/definitions/metadata/properties/flagSetId/type", keyword: "type", params: { type: schema6.properties.flagSetId.type }, message: "must be string,number,boolean", schema: schema6.properties.flagSetId.type, parentSchema: schema6.properties.flagSetId, data: data4 };
            if (vErrors === null) {
              vErrors = [err7];
            } else {
              vErrors.push(err7);
            }
            errors++;
          }
        }
        if (data2.version !== void 0) {
          let data5 = data2.version;
          if (typeof data5 !== "string" && !(typeof data5 == "number" && isFinite(data5)) && typeof data5 !== "boolean") {
            const err8 = { instancePath: instancePath + "/metadata/version", schemaPath: "#/definitions/metadata/properties/version/type", keyword: "type", params: { type: schema6.properties.version.type }, message: "must be string,number,boolean", schema: schema6.properties.version.type, parentSchema: schema6.properties.version, data: data5 };
            if (vErrors === null) {
              vErrors = [err8];
            } else {
              vErrors.push(err8);
            }
            errors++;
          }
        }
      } else {
        const err9 = { instancePath: instancePath + "/metadata", schemaPath: "#/definitions/metadata/type", keyword: "type", params: { type: "object" }, message: "must be object", schema: schema6.type, parentSchema: schema6, data: data2 };
        if (vErrors === null) {
          vErrors = [err9];
        } else {
          vErrors.push(err9);
        }
        errors++;
      }
    }
    if (data.segments !== void 0) {
      let data6 = data.segments;
      if (data6 && typeof data6 == "object" && !Array.isArray(data6)) {
        for (const key2 in data6) {
          const _errs20 = errors;
          if (typeof key2 === "string") {
            if (func0(key2) < 1) {
              const err10 = { instancePath: instancePath + "/segments", schemaPath: "#/definitions/rules/propertyNames/minLength", keyword: "minLength", params: { limit: 1 }, message: "must NOT have fewer than 1 characters", schema: 1, parentSchema: schema7.propertyNames, data: key2, propertyName: key2 };
              if (vErrors === null) {
                vErrors = [err10];
              } else {
                vErrors.push(err10);
              }
              errors++;
            }
          } else {
            const err11 = { instancePath: instancePath + "/segments", schemaPath: "#/definitions/rules/propertyNames/type", keyword: "type", params: { type: "string" }, message: "must be string", schema: schema7.propertyNames.type, parentSchema: schema7.propertyNames, data: key2, propertyName: key2 };
            if (vErrors === null) {
              vErrors = [err11];
            } else {
              vErrors.push(err11);
            }
            errors++;
          }
          var valid6 = _errs20 === errors;
          if (!valid6) {
            const err12 = { instancePath: instancePath + "/segments", schemaPath: "#/definitions/rules/propertyNames", keyword: "propertyNames", params: { propertyName: key2 }, message: "property name must be valid", schema: schema7.propertyNames, parentSchema: schema7, data: data6 };
            if (vErrors === null) {
              vErrors = [err12];
            } else {
              vErrors.push(err12);
            }
            errors++;
          }
        }
        for (const key3 in data6) {
          let data7 = data6[key3];
          if (!(data7 && typeof data7 == "object" && !Array.isArray(data7)) && typeof data7 !== "boolean") {
            const err13 = { instancePath: instancePath + "/segments/" + key3.replace(/~/g, "~0").replace(/\//g, "~1"), schemaPath: "#/definitions/rules/additionalProperties/type", keyword: "type", params: { type: schema7.additionalProperties.type }, message: "must be object,boolean", schema: schema7.additionalProperties.type, parentSchema: schema7.additionalProperties, data: data7 };
            if (vErrors === null) {
              vErrors = [err13];
            } else {
              vErrors.push(err13);
            }
            errors++;
          }
        }
      } else {
        const err14 = { instancePath: instancePath + "/segments", schemaPath: "#/definitions/rules/type", keyword: "type", params: { type: "object" }, message: "must be object", schema: schema7.type, parentSchema: schema7, data: data6 };
        if (vErrors === null) {
          vErrors = [err14];
        } else {
          vErrors.push(err14);
        }
        errors++;
      }
    }
    if (data.$evaluators !== void 0) {
      let data8 = data.$evaluators;
      if (data8 && typeof data8 == "object" && !Array.isArray(data8)) {
        for (const key4 in data8) {
          const _errs28 = errors;
          if (typeof key4 === "string") {
            if (func0(key4) < 1) {
              const err15 = { instancePath: instancePath + "/$evaluators", schemaPath: "#/definitions/rules/propertyNames/minLength", keyword: "minLength", params: { limit: 1 }, message: "must NOT have fewer than 1 characters", schema: 1, parentSchema: schema7.propertyNames, data: key4, propertyName: key4 };
              if (vErrors === null) {
                vErrors = [err15];
              } else {
                vErrors.push(err15);
              }
              errors++;
            }
          } else {
            const err16 = { instancePath: instancePath + "/$evaluators", schemaPath: "#/definitions/rules/propertyNames/type", keyword: "type", params: { type: "string" }, message: "must be string", schema: schema7.propertyNames.type, parentSchema: schema7.propertyNames, data: key4, propertyName: key4 };
            if (vErrors === null) {
              vErrors = [err16];
            } else {
              vErrors.push(err16);
            }
            errors++;
          }
          var valid9 = _errs28 === errors;
          if (!valid9) {
            const err17 = { instancePath: instancePath + "/$evaluators", schemaPath: "#/definitions/rules/propertyNames", keyword: "propertyNames", params: { propertyName: key4 }, message: "property name must be valid", schema: schema7.propertyNames, parentSchema: schema7, data: data8 };
            if (vErrors === null) {
              vErrors = [err17];
            } else {
              vErrors.push(err17);
            }
            errors++;
          }
        }
        for (const key5 in data8) {
          let data9 = data8[key5];
          if (!(data9 && typeof data9 == "object" && !Array.isArray(data9)) && typeof data9 !== "boolean") {
            const err18 = { instancePath: instancePath + "/$evaluators/" + key5.replace(/~/g, "~0").replace(/\//g, "~1"), schemaPath: "#/definitions/rules/additionalProperties/type", keyword: "type", params: { type: schema7.additionalProperties.type }, message: "must be object,boolean", schema: schema7.additionalProperties.type, parentSchema: schema7.additionalProperties, data: data9 };
            if (vErrors === null) {
              vErrors = [err18];
            } else {
              vErrors.push(err18);
            }
            errors++;
          }
        }
      } else {
        const err19 = { instancePath: instancePath + "/$evaluators", schemaPath: "#/definitions/rules/type", keyword: "type", params: { type: "object" }, message: "must be object", schema: schema7.type, parentSchema: schema7, data: data8 };
        if (vErrors === null) {
          vErrors = [err19];
        } else {
          vErrors.push(err19);
        }
        errors++;
      }
    }
    if (data.flags !== void 0) {
      let data10 = data.flags;
      const _errs34 = errors;
      let valid11 = true;
      const _errs35 = errors;
      if (!Array.isArray(data10)) {
        const err20 = {};
        if (vErrors === null) {
          vErrors = [err20];
        } else {
          vErrors.push(err20);
        }
        errors++;
      }
      var _valid0 = _errs35 === errors;
      errors = _errs34;
      if (vErrors !== null) {
        if (_errs34) {
          vErrors.length = _errs34;
        } else {
          vErrors = null;
        }
      }
      let ifClause0;
      if (_valid0) {
        const _errs37 = errors;
        if (!validate3(data10, { instancePath: instancePath + "/flags", parentData: data, parentDataProperty: "flags", rootData })) {
          vErrors = vErrors === null ? validate3.errors : vErrors.concat(validate3.errors);
          errors = vErrors.length;
        }
        var _valid0 = _errs37 === errors;
        valid11 = _valid0;
        ifClause0 = "then";
      } else {
        const _errs38 = errors;
        if (!validate7(data10, { instancePath: instancePath + "/flags", parentData: data, parentDataProperty: "flags", rootData })) {
          vErrors = vErrors === null ? validate7.errors : vErrors.concat(validate7.errors);
          errors = vErrors.length;
        }
        var _valid0 = _errs38 === errors;
        valid11 = _valid0;
        ifClause0 = "else";
      }
      if (!valid11) {
        const err21 = { instancePath: instancePath + "/flags", schemaPath: "#/properties/flags/if", keyword: "if", params: { failingKeyword: ifClause0 }, message: 'must match "' + ifClause0 + '" schema', schema: schema4.properties.flags.if, parentSchema: schema4.properties.flags, data: data10 };
        if (vErrors === null) {
          vErrors = [err21];
        } else {
          vErrors.push(err21);
        }
        errors++;
      }
    }
    if (data.notifications !== void 0) {
      let data11 = data.notifications;
      if (Array.isArray(data11)) {
        const len0 = data11.length;
        for (let i0 = 0; i0 < len0; i0++) {
          let data12 = data11[i0];
          if (data12 && typeof data12 == "object" && !Array.isArray(data12)) {
            if (data12.type === void 0) {
              const err22 = { instancePath: instancePath + "/notifications/" + i0, schemaPath: "#/definitions/notification/required", keyword: "required", params: { missingProperty: "type" }, message: "must have required property 'type'", schema: schema23.required, parentSchema: schema23, data: data12 };
              if (vErrors === null) {
                vErrors = [err22];
              } else {
                vErrors.push(err22);
              }
              errors++;
            }
            if (data12.url === void 0) {
              const err23 = { instancePath: instancePath + "/notifications/" + i0, schemaPath: "#/definitions/notification/required", keyword: "required", params: { missingProperty: "url" }, message: "must have required property 'url'", schema: schema23.required, parentSchema: schema23, data: data12 };
              if (vErrors === null) {
                vErrors = [err23];
              } else {
                vErrors.push(err23);
              }
              errors++;
            }
            for (const key6 in data12) {
              if (!(key6 === "type" || key6 === "url" || key6 === "secret" || key6 === "events")) {
                const err24 = { instancePath: instancePath + "/notifications/" + i0, schemaPath: "#/definitions/notification/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key6 }, message: "must NOT have additional properties", schema: false, parentSchema: schema23, data: data12 };
                if (vErrors === null) {
                  vErrors = [err24];
                } else {
                  vErrors.push(err24);
                }
                errors++;
              }
            }
            if (data12.type !== void 0) {
              let data13 = data12.type;
              if (typeof data13 !== "string") {
                const err25 = { instancePath: instancePath + "/notifications/" + i0 + "/type", schemaPath: "#/definitions/notification/properties/type/type", keyword: "type", params: { type: "string" }, message: "must be string", schema: schema23.properties.type.type, parentSchema: schema23.properties.type, data: data13 };
                if (vErrors === null) {
                  vErrors = [err25];
                } else {
                  vErrors.push(err25);
                }
                errors++;
              }
              if (!(data13 === "slack" || data13 === "webhook")) {
                const err26 = { instancePath: instancePath + "/notifications/" + i0 + "/type", schemaPath: "#/definitions/notification/properties/type/enum", keyword: "enum", params: { allowedValues: schema23.properties.type.enum }, message: "must be equal to one of the allowed values", schema: schema23.properties.type.enum, parentSchema: schema23.properties.type, data: data13 };
                if (vErrors === null) {
                  vErrors = [err26];
                } else {
                  vErrors.push(err26);
                }
                errors++;
              }
            }
            if (data12.url !== void 0) {
              let data14 = data12.url;
              if (typeof data14 === "string") {
                if (func0(data14) < 1) {
                  const err27 = { instancePath: instancePath + "/notifications/" + i0 + "/url", schemaPath: "#/definitions/notification/properties/url/minLength", keyword: "minLength", params: { limit: 1 }, message: "must NOT have fewer than 1 characters", schema: 1, parentSchema: schema23.properties.url, data: data14 };
                  if (vErrors === null) {
                    vErrors = [err27];
                  } else {
                    vErrors.push(err27);
                  }
                  errors++;
                }
              } else {
                const err28 = { instancePath: instancePath + "/notifications/" + i0 + "/url", schemaPath: "#/definitions/notification/properties/url/type", keyword: "type", params: { type: "string" }, message: "must be string", schema: schema23.properties.url.type, parentSchema: schema23.properties.url, data: data14 };
                if (vErrors === null) {
                  vErrors = [err28];
                } else {
                  vErrors.push(err28);
                }
                errors++;
              }
            }
            if (data12.secret !== void 0) {
              let data15 = data12.secret;
              if (typeof data15 === "string") {
                if (func0(data15) < 1) {
                  const err29 = { instancePath: instancePath + "/notifications/" + i0 + "/secret", schemaPath: "#/definitions/notification/properties/secret/minLength", keyword: "minLength", params: { limit: 1 }, message: "must NOT have fewer than 1 characters", schema: 1, parentSchema: schema23.properties.secret, data: data15 };
                  if (vErrors === null) {
                    vErrors = [err29];
                  } else {
                    vErrors.push(err29);
                  }
                  errors++;
                }
              } else {
                const err30 = { instancePath: instancePath + "/notifications/" + i0 + "/secret", schemaPath: "#/definitions/notification/properties/secret/type", keyword: "type", params: { type: "string" }, message: "must be string", schema: schema23.properties.secret.type, parentSchema: schema23.properties.secret, data: data15 };
                if (vErrors === null) {
                  vErrors = [err30];
                } else {
                  vErrors.push(err30);
                }
                errors++;
              }
            }
            if (data12.events !== void 0) {
              let data16 = data12.events;
              if (Array.isArray(data16)) {
                const len1 = data16.length;
                for (let i1 = 0; i1 < len1; i1++) {
                  let data17 = data16[i1];
                  if (typeof data17 !== "string") {
                    const err31 = { instancePath: instancePath + "/notifications/" + i0 + "/events/" + i1, schemaPath: "#/definitions/notification/properties/events/items/type", keyword: "type", params: { type: "string" }, message: "must be string", schema: schema23.properties.events.items.type, parentSchema: schema23.properties.events.items, data: data17 };
                    if (vErrors === null) {
                      vErrors = [err31];
                    } else {
                      vErrors.push(err31);
                    }
                    errors++;
                  }
                  if (!(data17 === "flag-created" || data17 === "flag-updated" || data17 === "flag-deleted" || data17 === "segment-created" || data17 === "segment-updated" || data17 === "segment-deleted" || data17 === "api-key-rotated")) {
                    const err32 = { instancePath: instancePath + "/notifications/" + i0 + "/events/" + i1, schemaPath: "#/definitions/notification/properties/events/items/enum", keyword: "enum", params: { allowedValues: schema23.properties.events.items.enum }, message: "must be equal to one of the allowed values", schema: schema23.properties.events.items.enum, parentSchema: schema23.properties.events.items, data: data17 };
                    if (vErrors === null) {
                      vErrors = [err32];
                    } else {
                      vErrors.push(err32);
                    }
                    errors++;
                  }
                }
                let i2 = data16.length;
                let j0;
                if (i2 > 1) {
                  const indices0 = {};
                  for (; i2--; ) {
                    let item0 = data16[i2];
                    if (typeof item0 !== "string") {
                      continue;
                    }
                    if (typeof indices0[item0] == "number") {
                      j0 = indices0[item0];
                      const err33 = { instancePath: instancePath + "/notifications/" + i0 + "/events", schemaPath: "#/definitions/notification/properties/events/uniqueItems", keyword: "uniqueItems", params: { i: i2, j: j0 }, message: "must NOT have duplicate items (items ## " + j0 + " and " + i2 + " are identical)", schema: true, parentSchema: schema23.properties.events, data: data16 };
                      if (vErrors === null) {
                        vErrors = [err33];
                      } else {
                        vErrors.push(err33);
                      }
                      errors++;
                      break;
                    }
                    indices0[item0] = i2;
                  }
                }
              } else {
                const err34 = { instancePath: instancePath + "/notifications/" + i0 + "/events", schemaPath: "#/definitions/notification/properties/events/type", keyword: "type", params: { type: "array" }, message: "must be array", schema: schema23.properties.events.type, parentSchema: schema23.properties.events, data: data16 };
                if (vErrors === null) {
                  vErrors = [err34];
                } else {
                  vErrors.push(err34);
                }
                errors++;
              }
            }
          } else {
            const err35 = { instancePath: instancePath + "/notifications/" + i0, schemaPath: "#/definitions/notification/type", keyword: "type", params: { type: "object" }, message: "must be object", schema: schema23.type, parentSchema: schema23, data: data12 };
            if (vErrors === null) {
              vErrors = [err35];
            } else {
              vErrors.push(err35);
            }
            errors++;
          }
        }
      } else {
        const err36 = { instancePath: instancePath + "/notifications", schemaPath: "#/properties/notifications/type", keyword: "type", params: { type: "array" }, message: "must be array", schema: schema4.properties.notifications.type, parentSchema: schema4.properties.notifications, data: data11 };
        if (vErrors === null) {
          vErrors = [err36];
        } else {
          vErrors.push(err36);
        }
        errors++;
      }
    }
  } else {
    const err37 = { instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object", schema: schema4.type, parentSchema: schema4, data };
    if (vErrors === null) {
      vErrors = [err37];
    } else {
      vErrors.push(err37);
    }
    errors++;
  }
  validate14.errors = vErrors;
  return errors === 0;
}
const flag = validate17;
function validate17(data, { instancePath = "", parentData, parentDataProperty, rootData = data } = {}) {
  let vErrors = null;
  let errors = 0;
  if (data && typeof data == "object" && !Array.isArray(data)) {
    if (data.variants === void 0) {
      const err0 = { instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: "variants" }, message: "must have required property 'variants'", schema: schema17.required, parentSchema: schema17, data };
      if (vErrors === null) {
        vErrors = [err0];
      } else {
        vErrors.push(err0);
      }
      errors++;
    }
    for (const key0 in data) {
      if (!(key0 === "state" || key0 === "variants" || key0 === "defaultVariant" || key0 === "targeting" || key0 === "metadata")) {
        const err1 = { instancePath, schemaPath: "#/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties", schema: false, parentSchema: schema17, data };
        if (vErrors === null) {
          vErrors = [err1];
        } else {
          vErrors.push(err1);
        }
        errors++;
      }
    }
    if (data.state !== void 0) {
      let data0 = data.state;
      if (typeof data0 !== "string") {
        const err2 = { instancePath: instancePath + "/state", schemaPath: "#/definitions/state/type", keyword: "type", params: { type: "string" }, message: "must be string", schema: schema11.type, parentSchema: schema11, data: data0 };
        if (vErrors === null) {
          vErrors = [err2];
        } else {
          vErrors.push(err2);
        }
        errors++;
      }
      if (!(data0 === "ENABLED" || data0 === "DISABLED")) {
        const err3 = { instancePath: instancePath + "/state", schemaPath: "#/definitions/state/enum", keyword: "enum", params: { allowedValues: schema11.enum }, message: "must be equal to one of the allowed values", schema: schema11.enum, parentSchema: schema11, data: data0 };
        if (vErrors === null) {
          vErrors = [err3];
        } else {
          vErrors.push(err3);
        }
        errors++;
      }
    }
    if (data.variants !== void 0) {
      let data1 = data.variants;
      const _errs8 = errors;
      let valid3 = false;
      const _errs9 = errors;
      if (data1 && typeof data1 == "object" && !Array.isArray(data1)) {
        for (const key1 in data1) {
          let data2 = data1[key1];
          if (typeof data2 !== "boolean") {
            const err4 = { instancePath: instancePath + "/variants/" + key1.replace(/~/g, "~0").replace(/\//g, "~1"), schemaPath: "#/definitions/variants/anyOf/0/additionalProperties/type", keyword: "type", params: { type: "boolean" }, message: "must be boolean", schema: schema12.anyOf[0].additionalProperties.type, parentSchema: schema12.anyOf[0].additionalProperties, data: data2 };
            if (vErrors === null) {
              vErrors = [err4];
            } else {
              vErrors.push(err4);
            }
            errors++;
          }
        }
      } else {
        const err5 = { instancePath: instancePath + "/variants", schemaPath: "#/definitions/variants/anyOf/0/type", keyword: "type", params: { type: "object" }, message: "must be object", schema: schema12.anyOf[0].type, parentSchema: schema12.anyOf[0], data: data1 };
        if (vErrors === null) {
          vErrors = [err5];
        } else {
          vErrors.push(err5);
        }
        errors++;
      }
      var _valid0 = _errs9 === errors;
      valid3 = valid3 || _valid0;
      if (!valid3) {
        const _errs14 = errors;
        if (data1 && typeof data1 == "object" && !Array.isArray(data1)) {
          for (const key2 in data1) {
            let data3 = data1[key2];
            if (typeof data3 !== "string") {
              const err6 = { instancePath: instancePath + "/variants/" + key2.replace(/~/g, "~0").replace(/\//g, "~1"), schemaPath: "#/definitions/variants/anyOf/1/additionalProperties/type", keyword: "type", params: { type: "string" }, message: "must be string", schema: schema12.anyOf[1].additionalProperties.type, parentSchema: schema12.anyOf[1].additionalProperties, data: data3 };
              if (vErrors === null) {
                vErrors = [err6];
              } else {
                vErrors.push(err6);
              }
              errors++;
            }
          }
        } else {
          const err7 = { instancePath: instancePath + "/variants", schemaPath: "#/definitions/variants/anyOf/1/type", keyword: "type", params: { type: "object" }, message: "must be object", schema: schema12.anyOf[1].type, parentSchema: schema12.anyOf[1], data: data1 };
          if (vErrors === null) {
            vErrors = [err7];
          } else {
            vErrors.push(err7);
          }
          errors++;
        }
        var _valid0 = _errs14 === errors;
        valid3 = valid3 || _valid0;
        if (!valid3) {
          const _errs19 = errors;
          if (data1 && typeof data1 == "object" && !Array.isArray(data1)) {
            for (const key3 in data1) {
              let data4 = data1[key3];
              if (!(typeof data4 == "number" && isFinite(data4))) {
                const err8 = { instancePath: instancePath + "/variants/" + key3.replace(/~/g, "~0").replace(/\//g, "~1"), schemaPath: "#/definitions/variants/anyOf/2/additionalProperties/type", keyword: "type", params: { type: "number" }, message: "must be number", schema: schema12.anyOf[2].additionalProperties.type, parentSchema: schema12.anyOf[2].additionalProperties, data: data4 };
                if (vErrors === null) {
                  vErrors = [err8];
                } else {
                  vErrors.push(err8);
                }
                errors++;
              }
            }
          } else {
            const err9 = { instancePath: instancePath + "/variants", schemaPath: "#/definitions/variants/anyOf/2/type", keyword: "type", params: { type: "object" }, message: "must be object", schema: schema12.anyOf[2].type, parentSchema: schema12.anyOf[2], data: data1 };
            if (vErrors === null) {
              vErrors = [err9];
            } else {
              vErrors.push(err9);
            }
            errors++;
          }
          var _valid0 = _errs19 === errors;
          valid3 = valid3 || _valid0;
          if (!valid3) {
            const _errs24 = errors;
            if (data1 && typeof data1 == "object" && !Array.isArray(data1)) {
              for (const key4 in data1) {
                let data5 = data1[key4];
                if (!(data5 && typeof data5 == "object" && !Array.isArray(data5))) {
                  const err10 = { instancePath: instancePath + "/variants/" + key4.replace(/~/g, "~0").replace(/\//g, "~1"), schemaPath: "#/definitions/variants/anyOf/3/additionalProperties/type", keyword: "type", params: { type: "object" }, message: "must be object", schema: schema12.anyOf[3].additionalProperties.type, parentSchema: schema12.anyOf[3].additionalProperties, data: data5 };
                  if (vErrors === null) {
                    vErrors = [err10];
                  } else {
                    vErrors.push(err10);
                  }
                  errors++;
                }
              }
            } else {
              const err11 = { instancePath: instancePath + "/variants", schemaPath: "#/definitions/variants/anyOf/3/type", keyword: "type", params: { type: "object" }, message: "must be object", schema: schema12.anyOf[3].type, parentSchema: schema12.anyOf[3], data: data1 };
              if (vErrors === null) {
                vErrors = [err11];
              } else {
                vErrors.push(err11);
              }
              errors++;
            }
            var _valid0 = _errs24 === errors;
            valid3 = valid3 || _valid0;
          }
        }
      }
      if (!valid3) {
        const err12 = { instancePath: instancePath + "/variants", schemaPath: "#/definitions/variants/anyOf", keyword: "anyOf", params: {}, message: "must match a schema in anyOf", schema: schema12.anyOf, parentSchema: schema12, data: data1 };
        if (vErrors === null) {
          vErrors = [err12];
        } else {
          vErrors.push(err12);
        }
        errors++;
      } else {
        errors = _errs8;
        if (vErrors !== null) {
          if (_errs8) {
            vErrors.length = _errs8;
          } else {
            vErrors = null;
          }
        }
      }
      if (data1 && typeof data1 == "object" && !Array.isArray(data1)) {
        if (Object.keys(data1).length < 1) {
          const err13 = { instancePath: instancePath + "/variants", schemaPath: "#/definitions/variants/minProperties", keyword: "minProperties", params: { limit: 1 }, message: "must NOT have fewer than 1 properties", schema: 1, parentSchema: schema12, data: data1 };
          if (vErrors === null) {
            vErrors = [err13];
          } else {
            vErrors.push(err13);
          }
          errors++;
        }
        for (const key5 in data1) {
          const _errs29 = errors;
          if (typeof key5 === "string") {
            if (func0(key5) < 1) {
              const err14 = { instancePath: instancePath + "/variants", schemaPath: "#/definitions/variants/propertyNames/minLength", keyword: "minLength", params: { limit: 1 }, message: "must NOT have fewer than 1 characters", schema: 1, parentSchema: schema12.propertyNames, data: key5, propertyName: key5 };
              if (vErrors === null) {
                vErrors = [err14];
              } else {
                vErrors.push(err14);
              }
              errors++;
            }
          } else {
            const err15 = { instancePath: instancePath + "/variants", schemaPath: "#/definitions/variants/propertyNames/type", keyword: "type", params: { type: "string" }, message: "must be string", schema: schema12.propertyNames.type, parentSchema: schema12.propertyNames, data: key5, propertyName: key5 };
            if (vErrors === null) {
              vErrors = [err15];
            } else {
              vErrors.push(err15);
            }
            errors++;
          }
          var valid8 = _errs29 === errors;
          if (!valid8) {
            const err16 = { instancePath: instancePath + "/variants", schemaPath: "#/definitions/variants/propertyNames", keyword: "propertyNames", params: { propertyName: key5 }, message: "property name must be valid", schema: schema12.propertyNames, parentSchema: schema12, data: data1 };
            if (vErrors === null) {
              vErrors = [err16];
            } else {
              vErrors.push(err16);
            }
            errors++;
          }
        }
      } else {
        const err17 = { instancePath: instancePath + "/variants", schemaPath: "#/definitions/variants/type", keyword: "type", params: { type: "object" }, message: "must be object", schema: schema12.type, parentSchema: schema12, data: data1 };
        if (vErrors === null) {
          vErrors = [err17];
        } else {
          vErrors.push(err17);
        }
        errors++;
      }
    }
    if (data.defaultVariant !== void 0) {
      let data6 = data.defaultVariant;
      if (typeof data6 !== "string" && data6 !== null) {
        const err18 = { instancePath: instancePath + "/defaultVariant", schemaPath: "#/definitions/defaultVariant/type", keyword: "type", params: { type: schema13.type }, message: "must be string,null", schema: schema13.type, parentSchema: schema13, data: data6 };
        if (vErrors === null) {
          vErrors = [err18];
        } else {
          vErrors.push(err18);
        }
        errors++;
      }
    }
    if (data.targeting !== void 0) {
      let data7 = data.targeting;
      if (!(data7 && typeof data7 == "object" && !Array.isArray(data7))) {
        const err19 = { instancePath: instancePath + "/targeting", schemaPath: "#/definitions/targeting/type", keyword: "type", params: { type: "object" }, message: "must be object", schema: schema14.type, parentSchema: schema14, data: data7 };
        if (vErrors === null) {
          vErrors = [err19];
        } else {
          vErrors.push(err19);
        }
        errors++;
      }
    }
    if (data.metadata !== void 0) {
      let data8 = data.metadata;
      if (data8 && typeof data8 == "object" && !Array.isArray(data8)) {
        for (const key6 in data8) {
          if (!(key6 === "flagSetId" || key6 === "version")) {
            let data9 = data8[key6];
            if (typeof data9 !== "string" && !(typeof data9 == "number" && isFinite(data9)) && typeof data9 !== "boolean") {
              const err20 = { instancePath: instancePath + "/metadata/" + key6.replace(/~/g, "~0").replace(/\//g, "~1"), schemaPath: "#/definitions/flagMetadata/additionalProperties/type", keyword: "type", params: { type: schema6.additionalProperties.type }, message: "must be string,number,boolean", schema: schema6.additionalProperties.type, parentSchema: schema6.additionalProperties, data: data9 };
              if (vErrors === null) {
                vErrors = [err20];
              } else {
                vErrors.push(err20);
              }
              errors++;
            }
          }
        }
        if (data8.flagSetId !== void 0) {
          let data10 = data8.flagSetId;
          if (typeof data10 !== "string" && !(typeof data10 == "number" && isFinite(data10)) && typeof data10 !== "boolean") {
            const err21 = { instancePath: instancePath + "/metadata/flagSetId", schemaPath: "#/definitions/flagMetadata/properties/flagSetId/type", keyword: "type", params: { type: schema6.properties.flagSetId.type }, message: "must be string,number,boolean", schema: schema6.properties.flagSetId.type, parentSchema: schema6.properties.flagSetId, data: data10 };
            if (vErrors === null) {
              vErrors = [err21];
            } else {
              vErrors.push(err21);
            }
            errors++;
          }
        }
        if (data8.version !== void 0) {
          let data11 = data8.version;
          if (typeof data11 !== "string" && !(typeof data11 == "number" && isFinite(data11)) && typeof data11 !== "boolean") {
            const err22 = { instancePath: instancePath + "/metadata/version", schemaPath: "#/definitions/flagMetadata/properties/version/type", keyword: "type", params: { type: schema6.properties.version.type }, message: "must be string,number,boolean", schema: schema6.properties.version.type, parentSchema: schema6.properties.version, data: data11 };
            if (vErrors === null) {
              vErrors = [err22];
            } else {
              vErrors.push(err22);
            }
            errors++;
          }
        }
      } else {
        const err23 = { instancePath: instancePath + "/metadata", schemaPath: "#/definitions/flagMetadata/type", keyword: "type", params: { type: "object" }, message: "must be object", schema: schema6.type, parentSchema: schema6, data: data8 };
        if (vErrors === null) {
          vErrors = [err23];
        } else {
          vErrors.push(err23);
        }
        errors++;
      }
    }
  } else {
    const err24 = { instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object", schema: schema17.type, parentSchema: schema17, data };
    if (vErrors === null) {
      vErrors = [err24];
    } else {
      vErrors.push(err24);
    }
    errors++;
  }
  validate17.errors = vErrors;
  return errors === 0;
}
const flagWithKey = validate18;
function validate18(data, { instancePath = "", parentData, parentDataProperty, rootData = data } = {}) {
  let vErrors = null;
  let errors = 0;
  if (data && typeof data == "object" && !Array.isArray(data)) {
    if (data.key === void 0) {
      const err0 = { instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: "key" }, message: "must have required property 'key'", schema: schema10.required, parentSchema: schema10, data };
      if (vErrors === null) {
        vErrors = [err0];
      } else {
        vErrors.push(err0);
      }
      errors++;
    }
    if (data.variants === void 0) {
      const err1 = { instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: "variants" }, message: "must have required property 'variants'", schema: schema10.required, parentSchema: schema10, data };
      if (vErrors === null) {
        vErrors = [err1];
      } else {
        vErrors.push(err1);
      }
      errors++;
    }
    for (const key0 in data) {
      if (!(key0 === "key" || key0 === "state" || key0 === "variants" || key0 === "defaultVariant" || key0 === "targeting" || key0 === "metadata")) {
        const err2 = { instancePath, schemaPath: "#/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties", schema: false, parentSchema: schema10, data };
        if (vErrors === null) {
          vErrors = [err2];
        } else {
          vErrors.push(err2);
        }
        errors++;
      }
    }
    if (data.key !== void 0) {
      let data0 = data.key;
      if (typeof data0 === "string") {
        if (func0(data0) < 1) {
          const err3 = { instancePath: instancePath + "/key", schemaPath: "#/properties/key/minLength", keyword: "minLength", params: { limit: 1 }, message: "must NOT have fewer than 1 characters", schema: 1, parentSchema: schema10.properties.key, data: data0 };
          if (vErrors === null) {
            vErrors = [err3];
          } else {
            vErrors.push(err3);
          }
          errors++;
        }
      } else {
        const err4 = { instancePath: instancePath + "/key", schemaPath: "#/properties/key/type", keyword: "type", params: { type: "string" }, message: "must be string", schema: schema10.properties.key.type, parentSchema: schema10.properties.key, data: data0 };
        if (vErrors === null) {
          vErrors = [err4];
        } else {
          vErrors.push(err4);
        }
        errors++;
      }
    }
    if (data.state !== void 0) {
      let data1 = data.state;
      if (typeof data1 !== "string") {
        const err5 = { instancePath: instancePath + "/state", schemaPath: "#/definitions/state/type", keyword: "type", params: { type: "string" }, message: "must be string", schema: schema11.type, parentSchema: schema11, data: data1 };
        if (vErrors === null) {
          vErrors = [err5];
        } else {
          vErrors.push(err5);
        }
        errors++;
      }
      if (!(data1 === "ENABLED" || data1 === "DISABLED")) {
        const err6 = { instancePath: instancePath + "/state", schemaPath: "#/definitions/state/enum", keyword: "enum", params: { allowedValues: schema11.enum }, message: "must be equal to one of the allowed values", schema: schema11.enum, parentSchema: schema11, data: data1 };
        if (vErrors === null) {
          vErrors = [err6];
        } else {
          vErrors.push(err6);
        }
        errors++;
      }
    }
    if (data.variants !== void 0) {
      let data2 = data.variants;
      const _errs10 = errors;
      let valid3 = false;
      const _errs11 = errors;
      if (data2 && typeof data2 == "object" && !Array.isArray(data2)) {
        for (const key1 in data2) {
          let data3 = data2[key1];
          if (typeof data3 !== "boolean") {
            const err7 = { instancePath: instancePath + "/variants/" + key1.replace(/~/g, "~0").replace(/\//g, "~1"), schemaPath: "#/definitions/variants/anyOf/0/additionalProperties/type", keyword: "type", params: { type: "boolean" }, message: "must be boolean", schema: schema12.anyOf[0].additionalProperties.type, parentSchema: schema12.anyOf[0].additionalProperties, data: data3 };
            if (vErrors === null) {
              vErrors = [err7];
            } else {
              vErrors.push(err7);
            }
            errors++;
          }
        }
      } else {
        const err8 = { instancePath: instancePath + "/variants", schemaPath: "#/definitions/variants/anyOf/0/type", keyword: "type", params: { type: "object" }, message: "must be object", schema: schema12.anyOf[0].type, parentSchema: schema12.anyOf[0], data: data2 };
        if (vErrors === null) {
          vErrors = [err8];
        } else {
          vErrors.push(err8);
        }
        errors++;
      }
      var _valid0 = _errs11 === errors;
      valid3 = valid3 || _valid0;
      if (!valid3) {
        const _errs16 = errors;
        if (data2 && typeof data2 == "object" && !Array.isArray(data2)) {
          for (const key2 in data2) {
            let data4 = data2[key2];
            if (typeof data4 !== "string") {
              const err9 = { instancePath: instancePath + "/variants/" + key2.replace(/~/g, "~0").replace(/\//g, "~1"), schemaPath: "#/definitions/variants/anyOf/1/additionalProperties/type", keyword: "type", params: { type: "string" }, message: "must be string", schema: schema12.anyOf[1].additionalProperties.type, parentSchema: schema12.anyOf[1].additionalProperties, data: data4 };
              if (vErrors === null) {
                vErrors = [err9];
              } else {
                vErrors.push(err9);
              }
              errors++;
            }
          }
        } else {
          const err10 = { instancePath: instancePath + "/variants", schemaPath: "#/definitions/variants/anyOf/1/type", keyword: "type", params: { type: "object" }, message: "must be object", schema: schema12.anyOf[1].type, parentSchema: schema12.anyOf[1], data: data2 };
          if (vErrors === null) {
            vErrors = [err10];
          } else {
            vErrors.push(err10);
          }
          errors++;
        }
        var _valid0 = _errs16 === errors;
        valid3 = valid3 || _valid0;
        if (!valid3) {
          const _errs21 = errors;
          if (data2 && typeof data2 == "object" && !Array.isArray(data2)) {
            for (const key3 in data2) {
              let data5 = data2[key3];
              if (!(typeof data5 == "number" && isFinite(data5))) {
                const err11 = { instancePath: instancePath + "/variants/" + key3.replace(/~/g, "~0").replace(/\//g, "~1"), schemaPath: "#/definitions/variants/anyOf/2/additionalProperties/type", keyword: "type", params: { type: "number" }, message: "must be number", schema: schema12.anyOf[2].additionalProperties.type, parentSchema: schema12.anyOf[2].additionalProperties, data: data5 };
                if (vErrors === null) {
                  vErrors = [err11];
                } else {
                  vErrors.push(err11);
                }
                errors++;
              }
            }
          } else {
            const err12 = { instancePath: instancePath + "/variants", schemaPath: "#/definitions/variants/anyOf/2/type", keyword: "type", params: { type: "object" }, message: "must be object", schema: schema12.anyOf[2].type, parentSchema: schema12.anyOf[2], data: data2 };
            if (vErrors === null) {
              vErrors = [err12];
            } else {
              vErrors.push(err12);
            }
            errors++;
          }
          var _valid0 = _errs21 === errors;
          valid3 = valid3 || _valid0;
          if (!valid3) {
            const _errs26 = errors;
            if (data2 && typeof data2 == "object" && !Array.isArray(data2)) {
              for (const key4 in data2) {
                let data6 = data2[key4];
                if (!(data6 && typeof data6 == "object" && !Array.isArray(data6))) {
                  const err13 = { instancePath: instancePath + "/variants/" + key4.replace(/~/g, "~0").replace(/\//g, "~1"), schemaPath: "#/definitions/variants/anyOf/3/additionalProperties/type", keyword: "type", params: { type: "object" }, message: "must be object", schema: schema12.anyOf[3].additionalProperties.type, parentSchema: schema12.anyOf[3].additionalProperties, data: data6 };
                  if (vErrors === null) {
                    vErrors = [err13];
                  } else {
                    vErrors.push(err13);
                  }
                  errors++;
                }
              }
            } else {
              const err14 = { instancePath: instancePath + "/variants", schemaPath: "#/definitions/variants/anyOf/3/type", keyword: "type", params: { type: "object" }, message: "must be object", schema: schema12.anyOf[3].type, parentSchema: schema12.anyOf[3], data: data2 };
              if (vErrors === null) {
                vErrors = [err14];
              } else {
                vErrors.push(err14);
              }
              errors++;
            }
            var _valid0 = _errs26 === errors;
            valid3 = valid3 || _valid0;
          }
        }
      }
      if (!valid3) {
        const err15 = { instancePath: instancePath + "/variants", schemaPath: "#/definitions/variants/anyOf", keyword: "anyOf", params: {}, message: "must match a schema in anyOf", schema: schema12.anyOf, parentSchema: schema12, data: data2 };
        if (vErrors === null) {
          vErrors = [err15];
        } else {
          vErrors.push(err15);
        }
        errors++;
      } else {
        errors = _errs10;
        if (vErrors !== null) {
          if (_errs10) {
            vErrors.length = _errs10;
          } else {
            vErrors = null;
          }
        }
      }
      if (data2 && typeof data2 == "object" && !Array.isArray(data2)) {
        if (Object.keys(data2).length < 1) {
          const err16 = { instancePath: instancePath + "/variants", schemaPath: "#/definitions/variants/minProperties", keyword: "minProperties", params: { limit: 1 }, message: "must NOT have fewer than 1 properties", schema: 1, parentSchema: schema12, data: data2 };
          if (vErrors === null) {
            vErrors = [err16];
          } else {
            vErrors.push(err16);
          }
          errors++;
        }
        for (const key5 in data2) {
          const _errs31 = errors;
          if (typeof key5 === "string") {
            if (func0(key5) < 1) {
              const err17 = { instancePath: instancePath + "/variants", schemaPath: "#/definitions/variants/propertyNames/minLength", keyword: "minLength", params: { limit: 1 }, message: "must NOT have fewer than 1 characters", schema: 1, parentSchema: schema12.propertyNames, data: key5, propertyName: key5 };
              if (vErrors === null) {
                vErrors = [err17];
              } else {
                vErrors.push(err17);
              }
              errors++;
            }
          } else {
            const err18 = { instancePath: instancePath + "/variants", schemaPath: "#/definitions/variants/propertyNames/type", keyword: "type", params: { type: "string" }, message: "must be string", schema: schema12.propertyNames.type, parentSchema: schema12.propertyNames, data: key5, propertyName: key5 };
            if (vErrors === null) {
              vErrors = [err18];
            } else {
              vErrors.push(err18);
            }
            errors++;
          }
          var valid8 = _errs31 === errors;
          if (!valid8) {
            const err19 = { instancePath: instancePath + "/variants", schemaPath: "#/definitions/variants/propertyNames", keyword: "propertyNames", params: { propertyName: key5 }, message: "property name must be valid", schema: schema12.propertyNames, parentSchema: schema12, data: data2 };
            if (vErrors === null) {
              vErrors = [err19];
            } else {
              vErrors.push(err19);
            }
            errors++;
          }
        }
      } else {
        const err20 = { instancePath: instancePath + "/variants", schemaPath: "#/definitions/variants/type", keyword: "type", params: { type: "object" }, message: "must be object", schema: schema12.type, parentSchema: schema12, data: data2 };
        if (vErrors === null) {
          vErrors = [err20];
        } else {
          vErrors.push(err20);
        }
        errors++;
      }
    }
    if (data.defaultVariant !== void 0) {
      let data7 = data.defaultVariant;
      if (typeof data7 !== "string" && data7 !== null) {
        const err21 = { instancePath: instancePath + "/defaultVariant", schemaPath: "#/definitions/defaultVariant/type", keyword: "type", params: { type: schema13.type }, message: "must be string,null", schema: schema13.type, parentSchema: schema13, data: data7 };
        if (vErrors === null) {
          vErrors = [err21];
        } else {
          vErrors.push(err21);
        }
        errors++;
      }
    }
    if (data.targeting !== void 0) {
      let data8 = data.targeting;
      if (!(data8 && typeof data8 == "object" && !Array.isArray(data8))) {
        const err22 = { instancePath: instancePath + "/targeting", schemaPath: "#/definitions/targeting/type", keyword: "type", params: { type: "object" }, message: "must be object", schema: schema14.type, parentSchema: schema14, data: data8 };
        if (vErrors === null) {
          vErrors = [err22];
        } else {
          vErrors.push(err22);
        }
        errors++;
      }
    }
    if (data.metadata !== void 0) {
      let data9 = data.metadata;
      if (data9 && typeof data9 == "object" && !Array.isArray(data9)) {
        for (const key6 in data9) {
          if (!(key6 === "flagSetId" || key6 === "version")) {
            let data10 = data9[key6];
            if (typeof data10 !== "string" && !(typeof data10 == "number" && isFinite(data10)) && typeof data10 !== "boolean") {
              const err23 = { instancePath: instancePath + "/metadata/" + key6.replace(/~/g, "~0").replace(/\//g, "~1"), schemaPath: "#/definitions/flagMetadata/additionalProperties/type", keyword: "type", params: { type: schema6.additionalProperties.type }, message: "must be string,number,boolean", schema: schema6.additionalProperties.type, parentSchema: schema6.additionalProperties, data: data10 };
              if (vErrors === null) {
                vErrors = [err23];
              } else {
                vErrors.push(err23);
              }
              errors++;
            }
          }
        }
        if (data9.flagSetId !== void 0) {
          let data11 = data9.flagSetId;
          if (typeof data11 !== "string" && !(typeof data11 == "number" && isFinite(data11)) && typeof data11 !== "boolean") {
            const err24 = { instancePath: instancePath + "/metadata/flagSetId", schemaPath: "#/definitions/flagMetadata/properties/flagSetId/type", keyword: "type", params: { type: schema6.properties.flagSetId.type }, message: "must be string,number,boolean", schema: schema6.properties.flagSetId.type, parentSchema: schema6.properties.flagSetId, data: data11 };
            if (vErrors === null) {
              vErrors = [err24];
            } else {
              vErrors.push(err24);
            }
            errors++;
          }
        }
        if (data9.version !== void 0) {
          let data12 = data9.version;
          if (typeof data12 !== "string" && !(typeof data12 == "number" && isFinite(data12)) && typeof data12 !== "boolean") {
            const err25 = { instancePath: instancePath + "/metadata/version", schemaPath: "#/definitions/flagMetadata/properties/version/type", keyword: "type", params: { type: schema6.properties.version.type }, message: "must be string,number,boolean", schema: schema6.properties.version.type, parentSchema: schema6.properties.version, data: data12 };
            if (vErrors === null) {
              vErrors = [err25];
            } else {
              vErrors.push(err25);
            }
            errors++;
          }
        }
      } else {
        const err26 = { instancePath: instancePath + "/metadata", schemaPath: "#/definitions/flagMetadata/type", keyword: "type", params: { type: "object" }, message: "must be object", schema: schema6.type, parentSchema: schema6, data: data9 };
        if (vErrors === null) {
          vErrors = [err26];
        } else {
          vErrors.push(err26);
        }
        errors++;
      }
    }
  } else {
    const err27 = { instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object", schema: schema10.type, parentSchema: schema10, data };
    if (vErrors === null) {
      vErrors = [err27];
    } else {
      vErrors.push(err27);
    }
    errors++;
  }
  validate18.errors = vErrors;
  return errors === 0;
}
const metadataValue = validate19;
const schema42 = { "description": "A string, number or boolean.", "type": ["string", "number", "boolean"] };
function validate19(data, { instancePath = "", parentData, parentDataProperty, rootData = data } = {}) {
  let vErrors = null;
  let errors = 0;
  if (typeof data !== "string" && !(typeof data == "number" && isFinite(data)) && typeof data !== "boolean") {
    const err0 = { instancePath, schemaPath: "#/type", keyword: "type", params: { type: schema42.type }, message: "must be string,number,boolean", schema: schema42.type, parentSchema: schema42, data };
    if (vErrors === null) {
      vErrors = [err0];
    } else {
      vErrors.push(err0);
    }
    errors++;
  }
  validate19.errors = vErrors;
  return errors === 0;
}
const notification = validate20;
function validate20(data, { instancePath = "", parentData, parentDataProperty, rootData = data } = {}) {
  let vErrors = null;
  let errors = 0;
  if (data && typeof data == "object" && !Array.isArray(data)) {
    if (data.type === void 0) {
      const err0 = { instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: "type" }, message: "must have required property 'type'", schema: schema23.required, parentSchema: schema23, data };
      if (vErrors === null) {
        vErrors = [err0];
      } else {
        vErrors.push(err0);
      }
      errors++;
    }
    if (data.url === void 0) {
      const err1 = { instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: "url" }, message: "must have required property 'url'", schema: schema23.required, parentSchema: schema23, data };
      if (vErrors === null) {
        vErrors = [err1];
      } else {
        vErrors.push(err1);
      }
      errors++;
    }
    for (const key0 in data) {
      if (!(key0 === "type" || key0 === "url" || key0 === "secret" || key0 === "events")) {
        const err2 = { instancePath, schemaPath: "#/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties", schema: false, parentSchema: schema23, data };
        if (vErrors === null) {
          vErrors = [err2];
        } else {
          vErrors.push(err2);
        }
        errors++;
      }
    }
    if (data.type !== void 0) {
      let data0 = data.type;
      if (typeof data0 !== "string") {
        const err3 = { instancePath: instancePath + "/type", schemaPath: "#/properties/type/type", keyword: "type", params: { type: "string" }, message: "must be string", schema: schema23.properties.type.type, parentSchema: schema23.properties.type, data: data0 };
        if (vErrors === null) {
          vErrors = [err3];
        } else {
          vErrors.push(err3);
        }
        errors++;
      }
      if (!(data0 === "slack" || data0 === "webhook")) {
        const err4 = { instancePath: instancePath + "/type", schemaPath: "#/properties/type/enum", keyword: "enum", params: { allowedValues: schema23.properties.type.enum }, message: "must be equal to one of the allowed values", schema: schema23.properties.type.enum, parentSchema: schema23.properties.type, data: data0 };
        if (vErrors === null) {
          vErrors = [err4];
        } else {
          vErrors.push(err4);
        }
        errors++;
      }
    }
    if (data.url !== void 0) {
      let data1 = data.url;
      if (typeof data1 === "string") {
        if (func0(data1) < 1) {
          const err5 = { instancePath: instancePath + "/url", schemaPath: "#/properties/url/minLength", keyword: "minLength", params: { limit: 1 }, message: "must NOT have fewer than 1 characters", schema: 1, parentSchema: schema23.properties.url, data: data1 };
          if (vErrors === null) {
            vErrors = [err5];
          } else {
            vErrors.push(err5);
          }
          errors++;
        }
      } else {
        const err6 = { instancePath: instancePath + "/url", schemaPath: "#/properties/url/type", keyword: "type", params: { type: "string" }, message: "must be string", schema: schema23.properties.url.type, parentSchema: schema23.properties.url, data: data1 };
        if (vErrors === null) {
          vErrors = [err6];
        } else {
          vErrors.push(err6);
        }
        errors++;
      }
    }
    if (data.secret !== void 0) {
      let data2 = data.secret;
      if (typeof data2 === "string") {
        if (func0(data2) < 1) {
          const err7 = { instancePath: instancePath + "/secret", schemaPath: "#/properties/secret/minLength", keyword: "minLength", params: { limit: 1 }, message: "must NOT have fewer than 1 characters", schema: 1, parentSchema: schema23.properties.secret, data: data2 };
          if (vErrors === null) {
            vErrors = [err7];
          } else {
            vErrors.push(err7);
          }
          errors++;
        }
      } else {
        const err8 = { instancePath: instancePath + "/secret", schemaPath: "#/properties/secret/type", keyword: "type", params: { type: "string" }, message: "must be string", schema: schema23.properties.secret.type, parentSchema: schema23.properties.secret, data: data2 };
        if (vErrors === null) {
          vErrors = [err8];
        } else {
          vErrors.push(err8);
        }
        errors++;
      }
    }
    if (data.events !== void 0) {
      let data3 = data.events;
      if (Array.isArray(data3)) {
        const len0 = data3.length;
        for (let i0 = 0; i0 < len0; i0++) {
          let data4 = data3[i0];
          if (typeof data4 !== "string") {
            const err9 = { instancePath: instancePath + "/events/" + i0, schemaPath: "#/properties/events/items/type", keyword: "type", params: { type: "string" }, message: "must be string", schema: schema23.properties.events.items.type, parentSchema: schema23.properties.events.items, data: data4 };
            if (vErrors === null) {
              vErrors = [err9];
            } else {
              vErrors.push(err9);
            }
            errors++;
          }
          if (!(data4 === "flag-created" || data4 === "flag-updated" || data4 === "flag-deleted" || data4 === "segment-created" || data4 === "segment-updated" || data4 === "segment-deleted" || data4 === "api-key-rotated")) {
            const err10 = { instancePath: instancePath + "/events/" + i0, schemaPath: "#/properties/events/items/enum", keyword: "enum", params: { allowedValues: schema23.properties.events.items.enum }, message: "must be equal to one of the allowed values", schema: schema23.properties.events.items.enum, parentSchema: schema23.properties.events.items, data: data4 };
            if (vErrors === null) {
              vErrors = [err10];
            } else {
              vErrors.push(err10);
            }
            errors++;
          }
        }
        let i1 = data3.length;
        let j0;
        if (i1 > 1) {
          const indices0 = {};
          for (; i1--; ) {
            let item0 = data3[i1];
            if (typeof item0 !== "string") {
              continue;
            }
            if (typeof indices0[item0] == "number") {
              j0 = indices0[item0];
              const err11 = { instancePath: instancePath + "/events", schemaPath: "#/properties/events/uniqueItems", keyword: "uniqueItems", params: { i: i1, j: j0 }, message: "must NOT have duplicate items (items ## " + j0 + " and " + i1 + " are identical)", schema: true, parentSchema: schema23.properties.events, data: data3 };
              if (vErrors === null) {
                vErrors = [err11];
              } else {
                vErrors.push(err11);
              }
              errors++;
              break;
            }
            indices0[item0] = i1;
          }
        }
      } else {
        const err12 = { instancePath: instancePath + "/events", schemaPath: "#/properties/events/type", keyword: "type", params: { type: "array" }, message: "must be array", schema: schema23.properties.events.type, parentSchema: schema23.properties.events, data: data3 };
        if (vErrors === null) {
          vErrors = [err12];
        } else {
          vErrors.push(err12);
        }
        errors++;
      }
    }
  } else {
    const err13 = { instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object", schema: schema23.type, parentSchema: schema23, data };
    if (vErrors === null) {
      vErrors = [err13];
    } else {
      vErrors.push(err13);
    }
    errors++;
  }
  validate20.errors = vErrors;
  return errors === 0;
}
export {
  environment,
  flag,
  flagWithKey,
  metadataValue,
  notification
};
