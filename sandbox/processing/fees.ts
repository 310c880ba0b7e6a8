import { FEE_CUSTOMER_TYPES, FEE_OPERATION_TYPES, FEE_PRODUCT_TYPES, type FeeCustomerType, type FeeOperationType, type FeeProductType } from '../../contracts/upstreams';

/** Operation, customer (spec 4.4.1) and product types of `POST /fees` (contracts/upstreams.ts). */
export const OPERATION_TYPES = FEE_OPERATION_TYPES;
export const CUSTOMER_TYPES = FEE_CUSTOMER_TYPES;
export const PRODUCT_TYPES = FEE_PRODUCT_TYPES;

export type OperationType = FeeOperationType;
export type CustomerType = FeeCustomerType;
export type ProductType = FeeProductType;

/** Currency of every fee of the sandbox fee table. */
export const FEE_CURRENCY = 'EUR';

type FeeRow = Readonly<Record<CustomerType, number>>;
const row = (consumerDebit: number, businessDebit: number, consumerPrepaid: number, businessPrepaid: number): FeeRow => ({
  'Consumer Debit': consumerDebit,
  'Business Debit': businessDebit,
  'Consumer Prepaid': consumerPrepaid,
  'Business Prepaid': businessPrepaid,
});

/** The fee table (EUR), mirrored in docs/upstreams.md. R001 and R004 are virtual-only: no delivery. */
export const FEE_TABLE: Readonly<Record<OperationType, Readonly<Record<ProductType, FeeRow>>>> = {
  CARD_ISSUING_FEE: {
    R001: row(0, 2, 1, 3),
    R002: row(5, 8, 6, 9),
    R003: row(15, 20, 16, 22),
    R004: row(2.5, 4, 3, 5),
    R005: row(49, 59, 55, 65),
    R006: row(9.9, 12, 10.9, 13),
  },
  CARD_DELIVERY_FEE: {
    R001: row(0, 0, 0, 0),
    R002: row(3.5, 4.5, 3.5, 4.5),
    R003: row(7.5, 9, 7.5, 9),
    R004: row(0, 0, 0, 0),
    R005: row(25, 25, 25, 25),
    R006: row(3.5, 4.5, 3.5, 4.5),
  },
};

/** The fee of one operation for a customer and product type, from {@link FEE_TABLE}. */
export function lookupFee(operation: OperationType, customer: CustomerType, product: ProductType): number {
  return FEE_TABLE[operation][product][customer];
}
