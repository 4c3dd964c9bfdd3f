#!/usr/bin/env bash
# make_seeds.sh: writes the seed inputs of the message-based fuzz targets
# into corpus/<target>/seed-<name> from the readable sources in seeds/:
#   seeds/<target>/<name>.txtpb    a request in protobuf text format,
#                                  encoded with protoc as the target's
#                                  message; a first line "# prefix N" puts
#                                  the byte N before it (the request kind of
#                                  a target that takes several)
#   seeds/<target>/<name>.txt      copied as it is (text-format targets)
# Run it after editing seeds/; commit both. Other corpus files (regression
# inputs, entries a fuzzer found) are left alone.
set -euo pipefail
cd "$(dirname "$0")"
root=../..

message_of() {  # message_of TARGET
  case $1 in
    read_rows) echo google.bigtable.v2.ReadRowsRequest ;;
    mutate_row) echo google.bigtable.v2.MutateRowRequest ;;
    mutate_rows) echo google.bigtable.v2.MutateRowsRequest ;;
    check_and_mutate_row) echo google.bigtable.v2.CheckAndMutateRowRequest ;;
    read_modify_write_row) echo google.bigtable.v2.ReadModifyWriteRowRequest ;;
    sample_row_keys) echo google.bigtable.v2.SampleRowKeysRequest ;;
    table_admin) echo "" ;;  # by prefix, below
    *) echo "make_seeds.sh: no message for $1" >&2; exit 1 ;;
  esac
}

admin_message() {  # admin_message PREFIX (table_admin_fuzzer.cc's order)
  case $1 in
    0) echo google.bigtable.admin.v2.CreateTableRequest ;;
    1) echo google.bigtable.admin.v2.ModifyColumnFamiliesRequest ;;
    2) echo google.bigtable.admin.v2.DropRowRangeRequest ;;
    3) echo google.bigtable.admin.v2.CheckConsistencyRequest ;;
    4) echo google.bigtable.admin.v2.UpdateTableRequest ;;
    5) echo google.bigtable.admin.v2.GetTableRequest ;;
  esac
}

for dir in seeds/*/; do
  target=$(basename "$dir")
  mkdir -p "corpus/$target"
  for src in "$dir"*; do
    name=$(basename "$src")
    out="corpus/$target/seed-${name%.*}"
    case $src in
      *.txt) cp "$src" "$out" ;;
      *.txtpb)
        prefix=$(sed -n '1s/^# prefix \([0-9]*\)$/\1/p' "$src")
        message=$(message_of "$target")
        [[ $target == table_admin ]] && message=$(admin_message "$prefix")
        {
          [[ -n $prefix ]] && printf "\\x$(printf %02x "$prefix")"
          protoc -I"$root/proto" -I/usr/include --encode="$message" \
            google/bigtable/v2/bigtable.proto \
            google/bigtable/admin/v2/bigtable_table_admin.proto <"$src"
        } >"$out"
        ;;
    esac
  done
done
