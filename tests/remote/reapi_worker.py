#!/usr/bin/env python3
"""A remote-execution worker for BuildGrid, for scripts/remote_build_test.sh.

BuildGrid schedules actions but runs none: workers ("bots") pull them through
the Remote Workers API (google.devtools.remoteworkers.v1test2.Bots). Its own
worker, BuildBox, is packaged on neither PyPI nor Debian, so the test brings
this one, built on the protobuf/gRPC modules that ship inside the buildgrid
package (run it with the venv's python).

A bot opens a session (CreateBotSession) and long-polls it
(UpdateBotSession). A lease carries an REAPI Action (or its digest); the bot
  1. reads the Action, its Command and its input root from the CAS,
  2. lays the input root out in a fresh directory (files hard-linked from a
     local blob cache, so a 38 MB ptxas is fetched once, not per action),
  3. runs Command.arguments there, in Command.working_directory, with exactly
     Command.environment_variables as the environment and nothing else,
  4. uploads the declared outputs, stdout and stderr to the CAS, and
  5. completes the lease with an ActionResult, which BuildGrid stores in its
     action cache and returns to the client.
Capacity is one action per bot; start several bots for parallelism.
"""

import argparse
import hashlib
import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid

import grpc
from google.protobuf import any_pb2

from buildgrid._protos.build.bazel.remote.execution.v2 import remote_execution_pb2 as re_pb2
from buildgrid._protos.build.bazel.remote.execution.v2 import remote_execution_pb2_grpc as re_grpc
from buildgrid._protos.google.bytestream import bytestream_pb2, bytestream_pb2_grpc
from buildgrid._protos.google.devtools.remoteworkers.v1test2 import bots_pb2, bots_pb2_grpc
from buildgrid._protos.google.devtools.remoteworkers.v1test2 import worker_pb2
from buildgrid._protos.google.rpc import code_pb2, status_pb2

# Blobs above this travel through ByteStream; smaller ones are batched.
BATCH_LIMIT = 1 << 20
CHUNK = 1 << 20
GRPC_OPTIONS = [
    ("grpc.max_receive_message_length", 64 << 20),
    ("grpc.max_send_message_length", 64 << 20),
]
LOG = logging.getLogger("reapi_worker")
# A busy server sheds load with these; the call is repeated after a pause.
TRANSIENT = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.RESOURCE_EXHAUSTED)


def with_retries(call, *args, **kwargs):
    """call(*args, **kwargs), repeated with backoff (up to about a minute) on transient errors."""
    for attempt in range(10):
        try:
            return call(*args, **kwargs)
        except grpc.RpcError as e:
            if e.code() not in TRANSIENT or attempt == 9:
                raise
            LOG.info("%s: %s; again in %.1f s", getattr(call, "__name__", "call"), e.code().name, 0.2 * 2**attempt)
            time.sleep(min(0.2 * 2**attempt, 15))


def digest_of(data):
    return re_pb2.Digest(hash=hashlib.sha256(data).hexdigest(), size_bytes=len(data))


def file_digest(path):
    h = hashlib.sha256()
    size = 0
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            h.update(chunk)
            size += len(chunk)
    return re_pb2.Digest(hash=h.hexdigest(), size_bytes=size)


class Cas:
    """CAS client with a local blob cache (one file per digest)."""

    def __init__(self, channel, instance, cache_dir):
        self.instance = instance
        self.cas = re_grpc.ContentAddressableStorageStub(channel)
        self.bytestream = bytestream_pb2_grpc.ByteStreamStub(channel)
        self.cache_dir = cache_dir
        self.directories = {}  # digest hash -> Directory, never changes
        os.makedirs(cache_dir, exist_ok=True)

    def _resource(self, digest):
        name = f"blobs/{digest.hash}/{digest.size_bytes}"
        return f"{self.instance}/{name}" if self.instance else name

    def read(self, digest):
        if digest.size_bytes == 0:
            return b""
        cached = os.path.join(self.cache_dir, digest.hash)
        if os.path.exists(cached):
            with open(cached, "rb") as f:
                return f.read()
        if digest.size_bytes > BATCH_LIMIT:
            request = bytestream_pb2.ReadRequest(resource_name=self._resource(digest))
            data = with_retries(lambda: b"".join(r.data for r in self.bytestream.Read(request)))
        else:
            response = with_retries(
                self.cas.BatchReadBlobs, re_pb2.BatchReadBlobsRequest(instance_name=self.instance, digests=[digest])
            )
            (blob,) = response.responses
            if blob.status.code != code_pb2.OK:
                raise RuntimeError(f"CAS read of {digest.hash}/{digest.size_bytes}: {blob.status.message}")
            data = blob.data
        if digest_of(data) != digest:
            raise RuntimeError(f"CAS returned a blob that does not match {digest.hash}/{digest.size_bytes}")
        return data

    def read_message(self, digest, message_type):
        message = message_type()
        message.ParseFromString(self.read(digest))
        return message

    def fetch_to_cache(self, digests):
        """Makes every digest a file in the blob cache; batches the small ones."""
        missing = {}
        for d in digests:
            if d.size_bytes and not os.path.exists(os.path.join(self.cache_dir, d.hash)):
                missing[d.hash] = d
        small, batch_bytes = [], 0

        def flush():
            nonlocal small, batch_bytes
            if not small:
                return
            response = with_retries(
                self.cas.BatchReadBlobs, re_pb2.BatchReadBlobsRequest(instance_name=self.instance, digests=small)
            )
            for blob in response.responses:
                if blob.status.code != code_pb2.OK:
                    raise RuntimeError(f"CAS read of {blob.digest.hash}: {blob.status.message}")
                self._store(blob.digest, blob.data)
            small, batch_bytes = [], 0

        for d in missing.values():
            if d.size_bytes > BATCH_LIMIT:
                self._store(d, self.read(d))
                continue
            if batch_bytes + d.size_bytes > 2 * BATCH_LIMIT:
                flush()
            small.append(d)
            batch_bytes += d.size_bytes
        flush()

    def _store(self, digest, data):
        if digest_of(data) != digest:
            raise RuntimeError(f"CAS returned a blob that does not match {digest.hash}/{digest.size_bytes}")
        path = os.path.join(self.cache_dir, digest.hash)
        tmp = f"{path}.{uuid.uuid4().hex}"
        with open(tmp, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o444)
        os.replace(tmp, path)

    def cached_path(self, digest, executable):
        """A read-only cache file with the blob's bytes and the wanted x bit."""
        base = os.path.join(self.cache_dir, digest.hash if digest.size_bytes else "empty")
        if not digest.size_bytes and not os.path.exists(base):
            open(base, "wb").close()
            os.chmod(base, 0o444)
        if not executable:
            return base
        path = base + ".x"
        if not os.path.exists(path):
            tmp = f"{path}.{uuid.uuid4().hex}"
            shutil.copyfile(base, tmp)
            os.chmod(tmp, 0o555)
            os.replace(tmp, path)
        return path

    def directory(self, digest):
        if digest.hash not in self.directories:
            self.directories[digest.hash] = self.read_message(digest, re_pb2.Directory)
        return self.directories[digest.hash]

    def upload(self, blobs):
        """blobs: list of (Digest, bytes or a file path). Uploads those the CAS lacks."""
        by_hash = {d.hash: (d, src) for d, src in blobs if d.size_bytes}
        if not by_hash:
            return
        response = with_retries(
            self.cas.FindMissingBlobs,
            re_pb2.FindMissingBlobsRequest(
                instance_name=self.instance, blob_digests=[d for d, _ in by_hash.values()]
            )
        )
        batch, batch_bytes = [], 0

        def flush():
            nonlocal batch, batch_bytes
            if batch:
                reply = with_retries(
                    self.cas.BatchUpdateBlobs, re_pb2.BatchUpdateBlobsRequest(instance_name=self.instance, requests=batch)
                )
                for r in reply.responses:
                    if r.status.code != code_pb2.OK:
                        raise RuntimeError(f"CAS write of {r.digest.hash}: {r.status.message}")
            batch, batch_bytes = [], 0

        for d in response.missing_blob_digests:
            _, src = by_hash[d.hash]
            if isinstance(src, bytes):
                data = src
            else:
                with open(src, "rb") as f:
                    data = f.read()
            if d.size_bytes > BATCH_LIMIT:
                self._write_stream(d, data)
                continue
            if batch_bytes + d.size_bytes > 2 * BATCH_LIMIT:
                flush()
            batch.append(re_pb2.BatchUpdateBlobsRequest.Request(digest=d, data=data))
            batch_bytes += d.size_bytes
        flush()

    def _write_stream(self, digest, data):
        name = f"uploads/{uuid.uuid4()}/blobs/{digest.hash}/{digest.size_bytes}"
        name = f"{self.instance}/{name}" if self.instance else name

        def requests():
            offset = 0
            while True:
                chunk = data[offset : offset + CHUNK]
                last = offset + len(chunk) >= len(data)
                yield bytestream_pb2.WriteRequest(
                    resource_name=name if offset == 0 else "", write_offset=offset, finish_write=last, data=chunk
                )
                offset += len(chunk)
                if last:
                    return

        reply = with_retries(lambda: self.bytestream.Write(requests()))
        if reply.committed_size != digest.size_bytes:
            raise RuntimeError(f"ByteStream write of {digest.hash}: committed {reply.committed_size}")


def materialize(cas, root_digest, path):
    """Lays out the input root at path: directories created, files hard-linked from the cache."""
    # First collect every file digest of the tree, to fetch the missing ones in batches.
    files, stack = [], [(root_digest, path)]
    layout = []
    while stack:
        digest, where = stack.pop()
        directory = cas.directory(digest)
        layout.append((where, directory))
        for f in directory.files:
            files.append(f.digest)
        for d in directory.directories:
            stack.append((d.digest, os.path.join(where, d.name)))
    cas.fetch_to_cache(files)
    for where, directory in layout:
        os.makedirs(where, exist_ok=True)
        for f in directory.files:
            os.link(cas.cached_path(f.digest, f.is_executable), os.path.join(where, f.name))
        for s in directory.symlinks:
            os.symlink(s.target, os.path.join(where, s.name))


def directory_tree(cas, path, blobs):
    """Builds the REAPI Directory of path (files, subdirectories, symlinks); adds blobs to upload."""
    directory = re_pb2.Directory()
    children = []
    for name in sorted(os.listdir(path)):
        full = os.path.join(path, name)
        if os.path.islink(full):
            directory.symlinks.add(name=name, target=os.readlink(full))
        elif os.path.isdir(full):
            sub, sub_children = directory_tree(cas, full, blobs)
            data = sub.SerializeToString()
            directory.directories.add(name=name, digest=digest_of(data))
            children.append(sub)
            children.extend(sub_children)
        else:
            d = file_digest(full)
            blobs.append((d, full))
            directory.files.add(name=name, digest=d, is_executable=os.access(full, os.X_OK))
    return directory, children


def run_action(cas, action, sandbox_root, keep):
    """Runs one Action; returns (ActionResult, Status)."""
    command = cas.read_message(action.command_digest, re_pb2.Command)
    sandbox = os.path.join(sandbox_root, uuid.uuid4().hex)
    result = re_pb2.ActionResult()
    metadata = result.execution_metadata
    metadata.worker = os.uname().nodename
    metadata.input_fetch_start_timestamp.GetCurrentTime()
    try:
        materialize(cas, action.input_root_digest, sandbox)
        metadata.input_fetch_completed_timestamp.GetCurrentTime()
        cwd = os.path.join(sandbox, command.working_directory)
        os.makedirs(cwd, exist_ok=True)
        # REAPI: the worker creates the outputs' parent directories.
        outputs_files = list(command.output_files)
        outputs_dirs = list(command.output_directories)
        if command.output_paths:  # REAPI v2.1: one list for both kinds
            outputs_files = outputs_dirs = list(command.output_paths)
        for out in set(outputs_files) | set(outputs_dirs):
            os.makedirs(os.path.dirname(os.path.join(cwd, out)) or cwd, exist_ok=True)
        env = {v.name: v.value for v in command.environment_variables}
        timeout = action.timeout.seconds or None
        metadata.execution_start_timestamp.GetCurrentTime()
        try:
            proc = subprocess.run(
                list(command.arguments), cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
            )
            exit_code, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
            status = status_pb2.Status(code=code_pb2.OK)
        except subprocess.TimeoutExpired as e:
            exit_code, stdout, stderr = -1, e.stdout or b"", e.stderr or b""
            status = status_pb2.Status(code=code_pb2.DEADLINE_EXCEEDED, message=f"timed out after {timeout} s")
        except OSError as e:  # e.g. the program does not exist
            exit_code, stdout, stderr = 127, b"", f"reapi_worker: {e}\n".encode()
            status = status_pb2.Status(code=code_pb2.OK)
        metadata.execution_completed_timestamp.GetCurrentTime()
        metadata.output_upload_start_timestamp.GetCurrentTime()
        result.exit_code = exit_code
        blobs = [(digest_of(stdout), stdout), (digest_of(stderr), stderr)]
        result.stdout_digest.CopyFrom(blobs[0][0])
        result.stderr_digest.CopyFrom(blobs[1][0])
        for out in outputs_files:
            full = os.path.join(cwd, out)
            if os.path.isfile(full):  # follows symlinks: the client gets the bytes
                d = file_digest(full)
                blobs.append((d, full))
                result.output_files.add(path=out, digest=d, is_executable=os.access(full, os.X_OK))
        for out in outputs_dirs:
            full = os.path.join(cwd, out)
            if os.path.isdir(full) and not os.path.islink(full):
                root, children = directory_tree(cas, full, blobs)
                tree = re_pb2.Tree(root=root, children=children)
                data = tree.SerializeToString()
                blobs.append((digest_of(data), data))
                result.output_directories.add(path=out, tree_digest=digest_of(data))
        cas.upload(blobs)
        metadata.output_upload_completed_timestamp.GetCurrentTime()
        return result, status
    finally:
        if not keep:
            shutil.rmtree(sandbox, ignore_errors=True)


class Bot:
    def __init__(self, args):
        self.args = args
        self.channel = grpc.insecure_channel(args.remote, options=GRPC_OPTIONS)
        self.bots = bots_pb2_grpc.BotsStub(self.channel)
        self.cas = Cas(self.channel, args.instance, os.path.join(args.work_dir, "blobs"))
        self.sandbox_root = os.path.join(args.work_dir, "sandboxes")
        os.makedirs(self.sandbox_root, exist_ok=True)

    def session_proto(self):
        device = worker_pb2.Device(handle=self.args.bot_id)
        for prop in self.args.platform:
            key, _, value = prop.partition("=")
            device.properties.add(key=key, value=value)
        worker = worker_pb2.Worker(devices=[device])
        worker.configs.add(key="capacity", value="1")
        return bots_pb2.BotSession(bot_id=self.args.bot_id, status=bots_pb2.BotStatus.OK, worker=worker)

    def update(self, session, timeout):
        return with_retries(
            self.bots.UpdateBotSession,
            bots_pb2.UpdateBotSessionRequest(name=session.name, bot_session=session),
            timeout=timeout,
        )

    def execute_lease(self, lease):
        try:
            if lease.payload.Is(re_pb2.Action.DESCRIPTOR):
                action = re_pb2.Action()
                lease.payload.Unpack(action)
            else:  # older servers send the Action's digest
                digest = re_pb2.Digest()
                lease.payload.Unpack(digest)
                action = self.cas.read_message(digest, re_pb2.Action)
            result, status = run_action(self.cas, action, self.sandbox_root, self.args.keep_sandboxes)
        except Exception as e:  # noqa: BLE001 - reported to the client as the lease's status
            LOG.exception("lease %s failed", lease.id)
            result, status = re_pb2.ActionResult(), status_pb2.Status(code=code_pb2.INTERNAL, message=str(e))
        payload = any_pb2.Any()
        payload.Pack(result)
        return payload, status

    def run(self):
        session = with_retries(
            self.bots.CreateBotSession,
            bots_pb2.CreateBotSessionRequest(parent=self.args.instance, bot_session=self.session_proto()),
            timeout=self.args.poll,
        )
        LOG.info("bot %s: session %s", self.args.bot_id, session.name)
        while True:
            active = [l for l in session.leases if l.state in (bots_pb2.LeaseState.PENDING, bots_pb2.LeaseState.ACTIVE)]
            if not active:
                try:
                    session = self.update(session, self.args.poll)  # long poll for work
                except grpc.RpcError as e:
                    if e.code() != grpc.StatusCode.DEADLINE_EXCEEDED:
                        LOG.warning("UpdateBotSession: %s", e.details())
                        time.sleep(1)
                continue
            lease = active[0]
            lease.state = bots_pb2.LeaseState.ACTIVE
            outcome = {}
            start = time.monotonic()
            worker = threading.Thread(target=lambda: outcome.update(r=self.execute_lease(lease)))
            worker.start()
            while worker.is_alive():
                worker.join(timeout=30)
                if worker.is_alive():  # keep the session and the lease alive
                    session = self.update(session, self.args.poll)
            payload, status = outcome["r"]
            lease = next((l for l in session.leases if l.id == lease.id), None)
            if lease is None:  # cancelled meanwhile: the server dropped it
                continue
            lease.state = bots_pb2.LeaseState.COMPLETED
            lease.result.CopyFrom(payload)
            lease.status.CopyFrom(status)
            LOG.info("bot %s: lease %s done in %.1f s (%s)", self.args.bot_id, lease.id,
                     time.monotonic() - start, code_pb2.Code.Name(status.code))
            try:
                session = self.update(session, self.args.poll)
            except grpc.RpcError as e:  # the completed lease stays in the session: reported next time
                LOG.warning("UpdateBotSession: %s", e.details())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--remote", default="127.0.0.1:50051", help="BuildGrid's address (host:port)")
    parser.add_argument("--instance", default="", help="the REAPI instance name")
    parser.add_argument("--bot-id", default=f"{os.uname().nodename}-{os.getpid()}")
    parser.add_argument("--work-dir", required=True, help="blob cache and sandboxes")
    parser.add_argument("--platform", action="append", default=[], help="KEY=VALUE device property")
    parser.add_argument("--poll", type=float, default=30, help="long-poll deadline of UpdateBotSession, s")
    parser.add_argument("--keep-sandboxes", action="store_true")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    bot = Bot(args)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    bot.run()


if __name__ == "__main__":
    main()
