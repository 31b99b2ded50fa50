"""Builds the Java shim during ``pip install`` with the JDK's javac (no Gradle needed)."""

import importlib.util
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class BuildShim(build_py):
    def run(self) -> None:
        super().run()
        shimbuild = _load("_pyjms_shimbuild", HERE / "pyjms" / "bridge" / "shimbuild.py")
        # the provider jars from jmspy (a build requirement), found without importing it
        spec = importlib.util.find_spec("jmspy")
        if spec is None or not spec.submodule_search_locations:
            raise RuntimeError("building pyjms needs the jmspy package (its ActiveMQ jars)")
        libs = Path(list(spec.submodule_search_locations)[0]) / "libs"
        classpath = [str(libs / "activemq-all-6.1.7.jar"), str(libs / "jakarta.jms-api-3.1.0.jar")]
        out = Path(self.build_lib) / "pyjms" / "_shim" / shimbuild.JAR_NAME
        shimbuild.build(HERE / "java", classpath, out)


setup(cmdclass={"build_py": BuildShim})
