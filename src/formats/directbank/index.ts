// 1C:DirectBank's codec: transport packets, the bank service's answers and the documents of a
// statement exchange, in the standard's formats 2.3.2 and 2.2.2. Pure: svc's DirectBank service
// (src/directbank/) uses it to answer 1C, a DirectBank bank client to talk to banks.
export * from "./documents";
export * from "./transport";
export * from "./xml";
