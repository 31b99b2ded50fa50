"""The wire: the JVM (jvm), the classpath and the shim jar (classpath, shim, shimbuild), the
record codec (codec), the typed channel (channel), Java exceptions translated into the error
tree (errors), and the Python/Java contract (contract)."""
