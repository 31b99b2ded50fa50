"""The bridge to the JVM: classpath, shim jar, JPype lifecycle, record codec, error translation."""
