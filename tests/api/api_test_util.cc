#include "tests/api/api_test_util.h"

#include <utility>

namespace btsim::api_test {

namespace {
constexpr int kMaxMessageBytes = 512 << 20;
}  // namespace

ReadOutcome ReadRowsRaw(v2::Bigtable::Stub& stub,
                        const v2::ReadRowsRequest& request,
                        const std::string& features) {
  ReadOutcome out;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(30));
  if (!features.empty()) context.AddMetadata("bigtable-features", features);
  ChunkMerger merger(request.reversed());
  auto reader = stub.ReadRows(&context, request);
  v2::ReadRowsResponse response;
  while (reader->Read(&response)) {
    ++out.responses;
    out.chunks += response.chunks_size();
    if (out.stream.ok()) out.stream = merger.Feed(response);
  }
  out.status = reader->Finish();
  if (out.status.ok() && out.stream.ok()) out.stream = merger.Finish();
  out.rows = merger.TakeRows();
  return out;
}

std::vector<MergedRow> ReadAll(v2::Bigtable::Stub& stub,
                               const v2::ReadRowsRequest& request,
                               const std::string& features) {
  ReadOutcome out = ReadRowsRaw(stub, request, features);
  EXPECT_TRUE(out.status.ok()) << "ReadRows failed: " << out.status.error_code()
                               << ": " << out.status.error_message();
  EXPECT_TRUE(out.stream.ok()) << out.stream.ToString();
  if (request.rows_limit() > 0) {
    EXPECT_LE(static_cast<int64_t>(out.rows.size()), request.rows_limit());
  }
  return std::move(out.rows);
}

std::string Base64Url(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t n = (static_cast<uint8_t>(bytes[i]) << 16) |
                       (static_cast<uint8_t>(bytes[i + 1]) << 8) |
                       static_cast<uint8_t>(bytes[i + 2]);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += kAlphabet[n & 63];
  }
  const size_t rest = bytes.size() - i;
  if (rest > 0) {
    uint32_t n = static_cast<uint8_t>(bytes[i]) << 16;
    if (rest == 2) n |= static_cast<uint8_t>(bytes[i + 1]) << 8;
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += rest == 2 ? kAlphabet[(n >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::string ReverseScanFeatures() {
  v2::FeatureFlags flags;
  flags.set_reverse_scans(true);
  flags.set_last_scanned_row_responses(true);
  return Base64Url(flags.SerializeAsString());
}

std::string BigEndian(int64_t v) {
  std::string out(8, '\0');
  const uint64_t u = static_cast<uint64_t>(v);
  for (int i = 0; i < 8; ++i) {
    out[i] = static_cast<char>((u >> (56 - 8 * i)) & 0xff);
  }
  return out;
}

v2::Mutation SetCellMutation(const std::string& family,
                             const std::string& qualifier,
                             const std::string& value,
                             int64_t timestamp_micros) {
  v2::Mutation m;
  auto* s = m.mutable_set_cell();
  s->set_family_name(family);
  s->set_column_qualifier(qualifier);
  s->set_value(value);
  s->set_timestamp_micros(timestamp_micros);
  return m;
}

v2::Mutation DeleteFromColumnMutation(const std::string& family,
                                      const std::string& qualifier,
                                      int64_t start_micros,
                                      int64_t end_micros) {
  v2::Mutation m;
  auto* d = m.mutable_delete_from_column();
  d->set_family_name(family);
  d->set_column_qualifier(qualifier);
  if (start_micros != 0 || end_micros != 0) {
    d->mutable_time_range()->set_start_timestamp_micros(start_micros);
    d->mutable_time_range()->set_end_timestamp_micros(end_micros);
  }
  return m;
}

v2::Mutation DeleteFromFamilyMutation(const std::string& family) {
  v2::Mutation m;
  m.mutable_delete_from_family()->set_family_name(family);
  return m;
}

v2::Mutation DeleteFromRowMutation() {
  v2::Mutation m;
  m.mutable_delete_from_row();
  return m;
}

// -------------------------------------------------------------- ServerTest

api::ServerOptions ServerTest::TestOptions() {
  api::ServerOptions options;
  options.host = "127.0.0.1";
  options.port = 0;
  options.compaction_interval = std::chrono::milliseconds(0);
  return options;
}

api::ServerOptions ServerTest::ThreeClusterOptions(sim::Duration latency) {
  api::ServerOptions options = TestOptions();
  options.instance.clusters = {{"c1", "us-east1-b", 1},
                               {"c2", "us-east1-c", 1},
                               {"c3", "europe-west1-d", 1}};
  options.instance.replication_latency = latency;
  return options;
}

void ServerTest::SetUp() { StartServer(TestOptions()); }

void ServerTest::StartServer(const api::ServerOptions& options) {
  server_ = std::make_unique<api::Server>(options);
  auto port = server_->Start();
  ASSERT_TRUE(port.ok()) << port.status().ToString();
  port_ = *port;
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxMessageBytes);
  args.SetMaxSendMessageSize(kMaxMessageBytes);
  channel_ =
      grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(port_),
                                grpc::InsecureChannelCredentials(), args);
  data_ = v2::Bigtable::NewStub(channel_);
  admin_ = admin::BigtableTableAdmin::NewStub(channel_);
}

void ServerTest::TearDown() {
  data_.reset();
  admin_.reset();
  channel_.reset();
  if (server_) server_->Shutdown();
  server_.reset();
}

std::string ServerTest::TableName(const std::string& id) {
  return std::string(kInstance) + "/tables/" + id;
}

grpc::Status ServerTest::TryCreateTable(
    const admin::CreateTableRequest& request, admin::Table* out) {
  grpc::ClientContext context;
  admin::Table table;
  grpc::Status s = admin_->CreateTable(&context, request, &table);
  if (out != nullptr) *out = std::move(table);
  return s;
}

void ServerTest::CreateTable(const std::string& id,
                             const std::vector<std::string>& families,
                             const std::vector<std::string>& splits) {
  admin::CreateTableRequest request;
  request.set_parent(kInstance);
  request.set_table_id(id);
  for (const std::string& f : families) {
    (*request.mutable_table()->mutable_column_families())[f];
  }
  for (const std::string& s : splits) request.add_initial_splits()->set_key(s);
  grpc::Status s = TryCreateTable(request);
  ASSERT_TRUE(s.ok()) << "CreateTable " << id << ": " << s.error_message();
}

grpc::Status ServerTest::Mutate(const std::string& table,
                                const std::string& key,
                                const std::vector<v2::Mutation>& mutations) {
  v2::MutateRowRequest request;
  request.set_table_name(TableName(table));
  request.set_row_key(key);
  for (const v2::Mutation& m : mutations) *request.add_mutations() = m;
  grpc::ClientContext context;
  v2::MutateRowResponse response;
  return data_->MutateRow(&context, request, &response);
}

void ServerTest::Set(const std::string& table, const std::string& key,
                     const std::string& family, const std::string& qualifier,
                     const std::string& value, int64_t timestamp_micros) {
  grpc::Status s =
      Mutate(table, key,
             {SetCellMutation(family, qualifier, value, timestamp_micros)});
  ASSERT_TRUE(s.ok()) << "MutateRow " << key << ": " << s.error_message();
}

std::vector<MergedRow> ServerTest::ReadTable(const std::string& table) {
  v2::ReadRowsRequest request;
  request.set_table_name(TableName(table));
  return ReadAll(*data_, request);
}

std::optional<MergedRow> ServerTest::ReadRow(const std::string& table,
                                             const std::string& key) {
  v2::ReadRowsRequest request;
  request.set_table_name(TableName(table));
  request.mutable_rows()->add_row_keys(key);
  std::vector<MergedRow> rows = ReadAll(*data_, request);
  EXPECT_LE(rows.size(), 1u);
  if (rows.empty()) return std::nullopt;
  EXPECT_EQ(rows[0].key, key);
  return rows[0];
}

std::vector<v2::SampleRowKeysResponse> ServerTest::SampleRowKeys(
    const std::string& table, grpc::Status* status) {
  v2::SampleRowKeysRequest request;
  request.set_table_name(TableName(table));
  grpc::ClientContext context;
  auto reader = data_->SampleRowKeys(&context, request);
  std::vector<v2::SampleRowKeysResponse> out;
  v2::SampleRowKeysResponse response;
  while (reader->Read(&response)) out.push_back(response);
  grpc::Status s = reader->Finish();
  if (status != nullptr) {
    *status = s;
  } else {
    EXPECT_TRUE(s.ok()) << s.error_message();
  }
  return out;
}

}  // namespace btsim::api_test
