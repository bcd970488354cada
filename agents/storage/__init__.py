"""The project's files on disk: JSON, CSV and text written whole or not at all (:mod:`.files`),
model zips (:mod:`.modelfile`), a policy saved as a model zip and read back without a model
(:mod:`.policyfile`) and YAML (:mod:`.yamlfile`)."""
