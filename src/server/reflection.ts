import { toBinary } from "@bufbuild/protobuf";
import type { DescFile } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { ReflectionService } from "@grpc/reflection";
import type { Server } from "@grpc/grpc-js";
import { file_grpc_reflection_v1_reflection } from "../gen/grpc/reflection/v1/reflection_pb.js";
import { file_grpc_reflection_v1alpha_reflection } from "../gen/grpc/reflection/v1alpha/reflection_pb.js";

/** The generated files of the reflection services themselves, so reflection describes itself. */
export const REFLECTION_FILES = [
  file_grpc_reflection_v1_reflection,
  file_grpc_reflection_v1alpha_reflection,
];

/**
 * Adds server reflection (v1 and v1alpha) built from the generated descriptors of `files` (with
 * their dependencies) and of reflection itself, so stock gRPC tools can list and call the
 * services — health included — without the .proto files.
 */
export function addReflection(server: Server, files: readonly DescFile[]): void {
  const seen = new Map<string, Uint8Array>();
  const visit = (file: DescFile) => {
    if (seen.has(file.name)) return;
    seen.set(file.name, toBinary(FileDescriptorProtoSchema, file.proto));
    file.dependencies.forEach(visit);
  };
  [...files, ...REFLECTION_FILES].forEach(visit);
  // @grpc/reflection reads `fileDescriptorProtos` from a proto-loader package definition.
  const pkg = { charter: { fileDescriptorProtos: [...seen.values()] } };
  new ReflectionService(
    pkg as unknown as ConstructorParameters<typeof ReflectionService>[0],
  ).addToServer(server);
}
