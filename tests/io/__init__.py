"""Files: the LETOR reader, text files as they come, model files and persistence, atomic
output, and the data layouts of other tools."""
