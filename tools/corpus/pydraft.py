"""Draft-vector writing shared by the Python corpus producers (kafka-python, aiokafka).

A draft holds the producer, name, kind and hex; tools/corpus/java-reader fills in the rest.
"""
import json
import os


class Drafts:
    """Writes drafts of one producer into <root>/<implementation>-<version>/."""

    def __init__(self, root, implementation, version):
        self.implementation = implementation
        self.version = version
        self.out = os.path.join(root, f"{implementation}-{version}")
        self.count = 0
        os.makedirs(self.out, exist_ok=True)

    def put(self, name, description, how, kind, data, notes=None):
        d = {
            "name": name,
            "description": description,
            "producer": {"implementation": self.implementation, "version": self.version, "how": how},
            "kind": kind,
            "hex": bytes(data).hex(),
        }
        if notes:
            d["notes"] = notes
        with open(os.path.join(self.out, name + ".json"), "w") as f:
            json.dump(d, f, indent=2)
            f.write("\n")
        self.count += 1
