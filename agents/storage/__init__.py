"""The project's files on disk: JSON, CSV and text written whole or not at all (:mod:`.files`),
model zips (:mod:`.modelfile`) and YAML (:mod:`.yamlfile`)."""
