// Package schema writes JSON Schemas (draft 2020-12) of diffusion-check's files: from Go
// types by reflection, in encoding/json's own terms (field names from `json` tags, omitempty,
// embedded structs, nil slices and maps written as null), so that the schema of a file
// cannot drift from the code that writes it. It imports nothing of the module.
package schema
